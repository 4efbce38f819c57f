// What the sign-in tests share: the OAuth fixture started for one test, a token store in
// memory as a host would write one, and the person's part of a sign-in that is approved
// at once.
import assert from "node:assert/strict"
import type { TestContext } from "node:test"
import type { TokenStore } from "toolnexus"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"

/** The OAuth fixture with `options`, closed when the test ends. */
export async function oauthServer(t: TestContext, options?: Parameters<typeof startOAuthServer>[0]) {
  const server = await startOAuthServer(options)
  t.after(() => server.close())
  return server
}

/** A store in memory, as a host would write one. */
export function memoryStore(): TokenStore & { values: Map<string, string> } {
  const values = new Map<string, string>()
  return {
    values,
    get: async (key) => values.get(key),
    set: async (key, value) => void values.set(key, value),
    delete: async (key) => void values.delete(key),
  }
}

/** The person's part when the authorization server approves at once: the redirect's URL. */
export async function followToRedirect(url: URL): Promise<URL> {
  const response = await fetch(url, { redirect: "manual" })
  const location = response.headers.get("location")
  assert.ok(location, `authorize answered ${response.status}: ${await response.text()}`)
  return new URL(location)
}
