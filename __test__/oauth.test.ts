// Remote servers behind OAuth: the sign-in the MCP authorization spec describes, against
// an authorization server and an MCP server written for the tests (fixtures/oauth-server),
// through the public API: onAuthorize returning the redirect URL or leaving it to the
// loopback listener, stored tokens, refresh, revocation, step-up, a wrong `iss`, a
// `resource` that is another server's, and no secret in anything toolnexus shows.
import assert from "node:assert/strict"
import { generateKeyPairSync } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { describe, test } from "node:test"
import { createMcpStore, listMcpTools, loadMcp } from "toolnexus"
import { assertCleanExit, runNode, sleep, tempDir, timed, toolNamed } from "./helpers.js"
import { followToRedirect, memoryStore, oauthServer } from "./oauth-helpers.js"

const T = { timeout: 60_000 }

describe("signing in", () => {
  test("first sign-in through a returned redirect URL: PKCE S256, resource, the tools listed", T, async (t) => {
    const server = await oauthServer(t)
    const tokenStore = memoryStore()
    const shown: URL[] = []
    const inv = await listMcpTools(
      { docs: { url: server.url } },
      { oauth: { tokenStore, onAuthorize: async (url) => (shown.push(url), followToRedirect(url)) } },
    )
    assert.deepEqual(inv.status, { docs: "connected" })
    assert.deepEqual(
      inv.tools.docs!.map((x) => x.name),
      ["whoami"],
    )
    assert.equal(shown.length, 1)
    const [request] = server.log.authorize
    assert.equal(request.code_challenge_method, "S256")
    assert.equal(request.resource, server.url)
    assert.equal(request.scope, "read", "the protected resource's scopes_supported")
    assert.equal(server.log.register.length, 1, "a dynamic registration")
    assert.equal(server.log.register[0].application_type, "native")
    assert.deepEqual(
      server.log.token.map((x) => x.grant),
      ["authorization_code"],
    )
    assert.equal(tokenStore.values.size, 1, "the tokens are kept")
  })

  test("first sign-in through the loopback listener, then the stored tokens without asking", T, async (t) => {
    const server = await oauthServer(t)
    const tokenStore = memoryStore()
    // The browser follows the redirect to toolnexus's listener; onAuthorize returns nothing.
    const onAuthorize = async (url: URL) => {
      const page = await fetch(url)
      assert.match(await page.text(), /Signed in/)
    }
    const first = await listMcpTools({ docs: { url: server.url } }, { oauth: { tokenStore, onAuthorize } })
    assert.deepEqual(first.status, { docs: "connected" })
    const redirect = new URL(server.log.authorize[0].redirect_uri)
    assert.equal(redirect.hostname, "127.0.0.1")
    assert.deepEqual(server.log.register[0].redirect_uris, [redirect.toString()])

    const again = await listMcpTools({ docs: { url: server.url } }, { oauth: { tokenStore } })
    assert.deepEqual(again.status, { docs: "connected" })
    assert.equal(server.log.authorize.length, 1, "no second sign-in")
  })

  test("the person's time signing in does not count against the server's timeout", T, async (t) => {
    const server = await oauthServer(t)
    // A person slower than the server's timeout: the duration is the point.
    const slowPerson = async (url: URL) => (await sleep(2_500), followToRedirect(url))
    const inv = await listMcpTools(
      { docs: { url: server.url, timeout: 1_500 } },
      { oauth: { tokenStore: memoryStore(), onAuthorize: slowPerson } },
    )
    assert.deepEqual(inv.status, { docs: "connected" }, inv.servers.docs?.error)
  })

  test("without onAuthorize and without a token, the server fails at once, saying how to sign in", T, async (t) => {
    const server = await oauthServer(t)
    const { value: source, ms } = await timed(() =>
      loadMcp({ docs: { url: server.url, timeout: 20_000 } }, { oauth: { tokenStore: memoryStore() } }),
    )
    t.after(() => source.close())
    assert.deepEqual(source.status, { docs: "failed" })
    assert.ok(ms < 5_000, `took ${ms} ms`)
    assert.equal(server.log.authorize.length, 0)

    const inv = await listMcpTools({ docs: { url: server.url } }, { oauth: { tokenStore: memoryStore() } })
    const report = (inv as unknown as { servers: Record<string, { error?: string; needsAuth?: boolean }> }).servers.docs
    assert.match(report?.error ?? "", /needs authorization: sign in with `toolnexus auth docs`/)
    assert.equal(report?.needsAuth, true)
  })

  test("a store shows such a server as needs_auth", T, async (t) => {
    const server = await oauthServer(t)
    const store = createMcpStore({ docs: { url: server.url } }, { oauth: { tokenStore: memoryStore() } })
    t.after(() => store.close())
    await store.listToolsAsync()
    const status = store.status().docs
    assert.equal(status?.state, "needs_auth")
    assert.match(status?.lastError ?? "", /toolnexus auth docs/)
  })

  test('"oauth": false never signs in', T, async (t) => {
    const server = await oauthServer(t)
    const inv = await listMcpTools(
      { docs: { url: server.url, oauth: false } },
      { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
    )
    assert.deepEqual(inv.status, { docs: "failed" })
    assert.equal(server.log.wellKnown.length, 0, "no discovery")
  })

  test("an expired access token is refreshed, without asking again", T, async (t) => {
    const server = await oauthServer(t)
    const tokenStore = memoryStore()
    const entry = { docs: { url: server.url } }
    await listMcpTools(entry, { oauth: { tokenStore, onAuthorize: followToRedirect } })
    server.expireAccessTokens()
    const inv = await listMcpTools(entry, { oauth: { tokenStore } })
    assert.deepEqual(inv.status, { docs: "connected" })
    assert.deepEqual(
      server.log.token.map((x) => x.grant),
      ["authorization_code", "refresh_token"],
    )
    assert.equal(server.log.token[1]!.resource, server.url, "the resource on refresh too")
    assert.equal(server.log.authorize.length, 1)
  })

  test("a revoked refresh token leads to one new sign-in, not a loop", T, async (t) => {
    const server = await oauthServer(t)
    const tokenStore = memoryStore()
    const entry = { docs: { url: server.url } }
    await listMcpTools(entry, { oauth: { tokenStore, onAuthorize: followToRedirect } })
    server.revokeAll()
    const inv = await listMcpTools(entry, { oauth: { tokenStore, onAuthorize: followToRedirect } })
    assert.deepEqual(inv.status, { docs: "connected" })
    assert.equal(server.log.authorize.length, 2)
    assert.deepEqual(
      server.log.token.map((x) => x.grant),
      ["authorization_code", "refresh_token", "authorization_code"],
    )
    assert.equal(server.log.register.length, 1, "the registration is kept")
  })

  test("a tool that needs more scope: step-up keeps the granted scope and the call succeeds", T, async (t) => {
    const server = await oauthServer(t, { scopes: ["read", "write"], challengeScope: "read", toolScope: "write" })
    const source = await loadMcp(
      { docs: { url: server.url } },
      { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
    )
    t.after(() => source.close())
    assert.deepEqual(source.status, { docs: "connected" })
    assert.equal(server.log.authorize[0]!.scope, "read", "the challenge's scope first")
    const result = await toolNamed(source, "docs_whoami").execute({})
    assert.equal(result.isError, false, result.output)
    assert.equal(result.output, "read write")
    assert.equal(server.log.authorize.length, 2)
    assert.deepEqual(server.log.authorize[1]!.scope.split(" ").sort(), ["read", "write"])
  })

  test(
    "a step-up in the middle of a call: the person's time does not count against the call's timeout",
    T,
    async (t) => {
      const server = await oauthServer(t, { scopes: ["read", "write"], challengeScope: "read", toolScope: "write" })
      let signIns = 0
      // The step-up's person is slower than the call's timeout: the duration is the point.
      const onAuthorize = async (url: URL) => (++signIns > 1 && (await sleep(2_500)), followToRedirect(url))
      const source = await loadMcp({ docs: { url: server.url } }, { oauth: { tokenStore: memoryStore(), onAuthorize } })
      t.after(() => source.close())
      const result = await toolNamed(source, "docs_whoami").execute({}, { timeout: 1_500 })
      assert.equal(result.isError, false, result.output)
      assert.equal(result.output, "read write")
    },
  )

  test("a step-up the server never satisfies fails the call after a bounded number of sign-ins", T, async (t) => {
    const server = await oauthServer(t, { scopes: ["read"], challengeScope: "read", toolScope: "admin" })
    const source = await loadMcp(
      { docs: { url: server.url } },
      { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
    )
    t.after(() => source.close())
    const result = await toolNamed(source, "docs_whoami").execute({})
    assert.equal(result.isError, true)
    assert.ok(server.log.authorize.length <= 4, `${server.log.authorize.length} sign-ins`)
  })

  test("a redirect whose iss is not the authorization server's is refused", T, async (t) => {
    const server = await oauthServer(t, { redirectIss: "http://127.0.0.1:1" })
    const inv = await listMcpTools(
      { docs: { url: server.url } },
      { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
    )
    assert.deepEqual(inv.status, { docs: "failed" })
    assert.equal(server.log.token.length, 0, "the code is never exchanged")
  })

  test("protected resource metadata for another resource is refused before any sign-in", T, async (t) => {
    const server = await oauthServer(t, { resource: "https://other.example/mcp" })
    const inv = await listMcpTools(
      { docs: { url: server.url } },
      { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
    )
    assert.deepEqual(inv.status, { docs: "failed" })
    assert.equal(server.log.authorize.length, 0)
  })

  test("a pre-registered confidential client from the config, its secret on the token request", T, async (t) => {
    const server = await oauthServer(t, { confidential: true })
    // Register out of band, as an administrator would.
    const registered = await fetch(`${server.base}/register`, {
      method: "POST",
      body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:47613/callback"] }),
    }).then((r) => r.json())
    const inv = await listMcpTools(
      {
        docs: {
          url: server.url,
          oauth: { clientId: registered.client_id, clientSecret: registered.client_secret, callbackPort: 47613 },
        },
      },
      { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
    )
    assert.deepEqual(inv.status, { docs: "connected" })
    assert.equal(server.log.register.length, 1, "no dynamic registration")
  })
})

describe("headless agents", () => {
  test("the client-credentials grant: no person, no browser, a new token when the old one expires", T, async (t) => {
    const server = await oauthServer(t, { confidential: true })
    const registered = await fetch(`${server.base}/register`, { method: "POST", body: "{}" }).then((r) => r.json())
    const entry = {
      agent: {
        url: server.url,
        oauth: {
          grantType: "client_credentials",
          clientId: registered.client_id,
          clientSecret: registered.client_secret,
        },
      },
    } as const
    const tokenStore = memoryStore()
    const first = await listMcpTools(entry, { oauth: { tokenStore } })
    assert.deepEqual(first.status, { agent: "connected" })
    server.expireAccessTokens()
    const second = await listMcpTools(entry, { oauth: { tokenStore } })
    assert.deepEqual(second.status, { agent: "connected" })
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.resource]),
      [
        ["client_credentials", server.url],
        ["client_credentials", server.url],
      ],
    )
    assert.equal(server.log.authorize.length, 0)
  })
})

describe("headless agents, private_key_jwt", () => {
  for (const type of ["ec", "rsa"] as const) {
    test(`a ${type === "ec" ? "P-256" : "RSA"} key signs the assertion; the key shows nowhere`, T, async (t) => {
      const server = await oauthServer(t, { confidential: true })
      const { privateKey, publicKey } =
        type === "ec"
          ? generateKeyPairSync("ec", { namedCurve: "P-256" })
          : generateKeyPairSync("rsa", { modulusLength: 2048 })
      const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
      const registered = await fetch(`${server.base}/register`, {
        method: "POST",
        body: JSON.stringify({ public_key_pem: publicKey.export({ type: "spki", format: "pem" }) }),
      }).then((r) => r.json())
      const entry = {
        agent: {
          url: server.url,
          oauth: { grantType: "client_credentials", clientId: registered.client_id, privateKey: pem },
        },
      } as const
      const inv = await listMcpTools(entry, { oauth: { tokenStore: memoryStore() } })
      assert.deepEqual(inv.status, { agent: "connected" })
      assert.deepEqual(
        server.log.token.map((x) => [x.grant, x.resource]),
        [["client_credentials", server.url]],
      )
      // A key the server does not know: refused, and the reason holds no key material.
      const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({
        type: "pkcs8",
        format: "pem",
      })
      const bad = { agent: { ...entry.agent, oauth: { ...entry.agent.oauth, privateKey: other.toString() } } }
      const refused = await listMcpTools(bad, { oauth: { tokenStore: memoryStore() } })
      const report = (refused as unknown as { servers: Record<string, { error?: string }> }).servers.agent
      assert.deepEqual(refused.status, { agent: "failed" })
      assert.match(report?.error ?? "", /could not sign in/)
      assert.ok(!(report?.error ?? "").includes("PRIVATE KEY"))
    })
  }
})

describe("tokens at rest", () => {
  test("the default store: a 0600 file under XDG_CONFIG_HOME, used by the next process", T, async (t) => {
    const server = await oauthServer(t)
    const home = tempDir(t)
    const env = { ...process.env, XDG_CONFIG_HOME: home }
    const script = (withAuthorize: boolean) => `
      import { listMcpTools } from "toolnexus"
      const onAuthorize = async (url) => new URL((await fetch(url, { redirect: "manual" })).headers.get("location"))
      const inv = await listMcpTools({ docs: { url: ${JSON.stringify(server.url)} } }, ${withAuthorize ? "{ oauth: { onAuthorize } }" : "{}"})
      console.log(JSON.stringify(inv.status))`
    const first = await runNode(script(true), { env })
    assert.equal(first.stdout.trim(), '{"docs":"connected"}', first.stderr)
    const folder = path.join(home, "toolnexus", "oauth")
    const files = fs.readdirSync(folder)
    assert.equal(files.length, 1)
    assert.equal(fs.statSync(path.join(folder, files[0]!)).mode & 0o777, 0o600)
    assert.equal(fs.statSync(folder).mode & 0o777, 0o700)
    const second = await runNode(script(false), { env })
    assert.equal(second.stdout.trim(), '{"docs":"connected"}', second.stderr)
    assert.equal(server.log.authorize.length, 1)
  })

  test("no access token, refresh token, code, verifier or client secret in any output", T, async (t) => {
    const server = await oauthServer(t, { confidential: true })
    const home = tempDir(t)
    const env = { ...process.env, XDG_CONFIG_HOME: home }
    // A good sign-in, a store's status, a failing server (a wrong iss) and its reasons.
    const bad = await oauthServer(t, { confidential: true, redirectIss: "http://127.0.0.1:1" })
    const script = `
      import { loadMcp, createMcpStore } from "toolnexus"
      const onAuthorize = async (url) => new URL((await fetch(url, { redirect: "manual" })).headers.get("location"))
      const config = { good: { url: ${JSON.stringify(server.url)} }, bad: { url: ${JSON.stringify(bad.url)} } }
      const source = await loadMcp(config, { oauth: { onAuthorize } })
      console.log(JSON.stringify(source.status))
      for (const tool of source.tools) console.log(JSON.stringify(await tool.execute({})))
      await source.close()
      const store = createMcpStore(config, { oauth: { onAuthorize } })
      // Until both servers have connected or failed; bounded, and keeping the process up meanwhile.
      await new Promise((resolve, reject) => {
        const timer = setTimeout(reject, 15_000, new Error("the store was still initializing 15 s on"))
        const settled = () => store.isInitializing() || (clearTimeout(timer), resolve())
        store.onChange(settled)
        settled()
      })
      console.log(JSON.stringify(store.status()))
      await store.close()`
    const run = await runNode(script, { env })
    assertCleanExit(run) // the script fails if its store never settles
    assert.match(run.stdout, /"good":"connected"/, run.stderr)
    assert.match(run.stdout, /"bad":"failed"/)
    const secrets = [...server.secrets, ...bad.secrets].filter((x) => x.length > 0)
    assert.ok(secrets.length >= 6, "the fixture handed out secrets")
    for (const secret of secrets) {
      assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), "a secret was shown")
    }
  })
})
