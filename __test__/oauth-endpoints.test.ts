// An authorization server whose metadata sends the sign-in elsewhere: every endpoint it
// names (authorization, token, registration, revocation), the metadata documents, a
// `clientMetadataUrl` and the redirect URI toolnexus registers must be https, or http on
// a loopback host. The attacker's host here
// is plain http and not loopback, under `.invalid` (it resolves nowhere); that nothing was
// sent to it shows in the reason, which only the check before a request gives, and in the
// fixture's log: no registration, no authorization, no token request. Both eras: the
// 2026-07-28 one signs in on its first request (`server/discover`) through the same layer.
import assert from "node:assert/strict"
import { describe, test, type TestContext } from "node:test"
import { listMcpTools } from "toolnexus"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"

const T = { timeout: 60_000 }
const ATTACKER = "http://auth.attacker.invalid"
const ERAS = ["2025-11-25", "2026-07-28"] as const

const reason = (what: string) =>
  `refused ${what} of "docs" at ${ATTACKER}: an OAuth endpoint must be https, or http on a loopback host (127.0.0.1, ::1, localhost); nothing was sent to it`

/** Signs in to a fixture bent by `options`; the server's report and what reached it. */
async function signIn(
  t: TestContext,
  protocol: (typeof ERAS)[number],
  options: Parameters<typeof startOAuthServer>[0],
  oauth: Record<string, unknown> = {},
) {
  const server = await startOAuthServer(options)
  t.after(() => server.close())
  const shown: URL[] = []
  const values = new Map<string, string>()
  const inv = await listMcpTools(
    { docs: { url: server.url, protocol, oauth } },
    {
      oauth: {
        tokenStore: {
          get: async (key) => values.get(key),
          set: async (key, value) => void values.set(key, value),
          delete: async (key) => void values.delete(key),
        },
        // The person approves at once: the redirect's URL.
        onAuthorize: async (url) => {
          shown.push(url)
          const location = (await fetch(url, { redirect: "manual" })).headers.get("location")
          return new URL(location ?? "")
        },
      },
    },
  )
  return { inv, server, shown }
}

const cases = [
  { what: "the authorization endpoint", options: { endpoints: { authorization: `${ATTACKER}/authorize` } } },
  { what: "the token endpoint", options: { endpoints: { token: `${ATTACKER}/token` } } },
  { what: "the registration endpoint", options: { endpoints: { registration: `${ATTACKER}/register` } } },
  { what: "the revocation endpoint", options: { endpoints: { revocation: `${ATTACKER}/revoke` } } },
  { what: "the OAuth metadata document", options: { authorizationServer: ATTACKER } },
  {
    what: "the OAuth metadata document",
    label: "the protected resource metadata a challenge names",
    options: { resourceMetadataUrl: `${ATTACKER}/.well-known/oauth-protected-resource/mcp` },
  },
]

for (const protocol of ERAS) {
  describe(`OAuth endpoints, MCP ${protocol}`, () => {
    for (const { what, label, options } of cases) {
      test(
        `${label ?? what} on another host over plain http fails the sign-in before anything is sent`,
        T,
        async (t) => {
          const { inv, server, shown } = await signIn(t, protocol, options)
          assert.deepEqual(inv.status, { docs: "failed" })
          assert.equal(inv.servers.docs?.error, reason(what))
          assert.equal(shown.length, 0, "onAuthorize was not called")
          assert.deepEqual(server.log.register, [], "no registration")
          assert.deepEqual(server.log.authorize, [], "no authorization request")
          assert.deepEqual(server.log.token, [], "no token request")
        },
      )
    }

    test("a clientMetadataUrl on another host over plain http is refused", T, async (t) => {
      const { inv, server, shown } = await signIn(
        t,
        protocol,
        { cimd: true },
        { clientMetadataUrl: `${ATTACKER}/client.json` },
      )
      assert.deepEqual(inv.status, { docs: "failed" })
      assert.equal(inv.servers.docs?.error, reason('the "clientMetadataUrl"'))
      assert.equal(shown.length, 0)
      assert.deepEqual(server.log.authorize, [])
      assert.deepEqual(server.log.token, [])
    })

    test("loopback endpoints over plain http are allowed: the sign-in completes", T, async (t) => {
      const { inv, server, shown } = await signIn(t, protocol, {})
      assert.equal(shown.length, 1, inv.servers.docs?.error)
      assert.equal(shown[0]!.origin, server.base)
      assert.equal(server.log.token.length, 1)
      // The redirect URI registered and sent is held to the same rule: http on loopback.
      const registered: string[] = server.log.register.flatMap((body) => body.redirect_uris)
      const sent = server.log.authorize.map((query) => query.redirect_uri)
      assert.equal(registered.length, 1)
      assert.deepEqual(sent, registered)
      assert.match(registered[0]!, /^http:\/\/127\.0\.0\.1:\d+\//)
    })
  })
}
