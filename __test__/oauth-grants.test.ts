// Signing in with no person and no browser beyond the client-credentials grant (issue
// #36, "enterprise sign-in"), against the OAuth fixture (fixtures/oauth-server.mjs): a
// workload's identity token as an RFC 7523 jwt-bearer assertion (inline, from a file read
// again for every token request, from a variable), an enterprise ID token exchanged at
// the IdP for an ID-JAG and that redeemed at the server's authorization server, the
// `resource` on every token request of every grant, and the private-network guard every
// OAuth request goes through. The config's new keys fail their own entry, naming the key.
import assert from "node:assert/strict"
import { generateKeyPairSync } from "node:crypto"
import fs from "node:fs"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import { listMcpTools, loadMcp, parseMcpConfig } from "toolnexus"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"
import { assertCleanExit, FAST, failureLines, ROOT, runNode, runProcess, tempDir, timed, toolNamed } from "./helpers.js"
import { followToRedirect, memoryStore, oauthServer } from "./oauth-helpers.js"

const T = { timeout: 60_000 }
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

/** An onAuthorize that must never be called: these grants ask no person. */
function noPerson() {
  const asked: URL[] = []
  return { asked, onAuthorize: async (url: URL) => void asked.push(url) }
}

/** A workload identity token as a platform issues one (its signature is not checked). */
function workloadJwt(subject: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
  const now = Math.floor(Date.now() / 1000)
  const claims = { iss: "https://k8s.example", sub: subject, aud: "toolnexus", iat: now, exp: now + 600 }
  return `${part({ alg: "RS256", typ: "JWT" })}.${part(claims)}.${Buffer.from(`sig-${subject}`).toString("base64url")}`
}

const decodeJwt = (jwt: string) => {
  const [header, claims] = jwt
    .split(".")
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, "base64url").toString()))
  return { header, claims }
}

const basic = (header: string | null) =>
  header?.startsWith("Basic ") ? Buffer.from(header.slice(6), "base64").toString() : undefined

describe("jwt-bearer (workload identity)", () => {
  test(
    "an inline assertion: one token request with the assertion and resource, no registration, no browser",
    T,
    async (t) => {
      const server = await oauthServer(t)
      const assertion = workloadJwt("inline")
      const person = noPerson()
      const source = await loadMcp(
        { docs: { url: server.url, oauth: { grantType: "jwt-bearer", assertion } } },
        { oauth: { tokenStore: memoryStore(), onAuthorize: person.onAuthorize } },
      )
      t.after(() => source.close())
      assert.deepEqual(source.status, { docs: "connected" })
      const result = await toolNamed(source, "docs_whoami").execute({})
      assert.equal(result.isError, false, result.output)
      assert.deepEqual(
        server.log.token.map((x) => [x.grant, x.assertion, x.resource, x.client_id, x.authorization]),
        [[JWT_BEARER, assertion, server.url, null, null]],
      )
      assert.deepEqual(server.log.register, [], "no registration")
      assert.deepEqual(server.log.authorize, [], "no authorization request")
      assert.equal(person.asked.length, 0, "onAuthorize was not called")
    },
  )

  test("clientId and scopes go with the assertion", T, async (t) => {
    const server = await oauthServer(t, { scopes: ["read", "write"] })
    const inv = await listMcpTools(
      {
        docs: {
          url: server.url,
          oauth: { grantType: "jwt-bearer", clientId: "workload-7", scopes: ["read", "write"], assertion: "a.b.c" },
        },
      },
      { oauth: { tokenStore: memoryStore() } },
    )
    assert.deepEqual(inv.status, { docs: "connected" }, inv.servers.docs?.error)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.client_id, x.scope, x.resource]),
      [[JWT_BEARER, "workload-7", "read write", server.url]],
    )
  })

  test("an assertion { file }: read again for every token request, so a rotated file is used", T, async (t) => {
    const server = await oauthServer(t)
    const dir = tempDir(t)
    const file = path.join(dir, "token.jwt")
    const first = workloadJwt("first")
    fs.writeFileSync(file, `${first}\n`) // a platform's file may end in a newline
    // Relative to the config file's folder.
    const config = path.join(dir, "mcp.json")
    fs.writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { docs: { url: server.url, oauth: { grantType: "jwt-bearer", assertion: { file: "token.jwt" } } } },
      }),
    )
    const tokenStore = memoryStore()
    const source = await loadMcp(config, { oauth: { tokenStore } })
    t.after(() => source.close())
    assert.deepEqual(source.status, { docs: "connected" })
    assert.deepEqual(
      server.log.token.map((x) => x.assertion),
      [first],
    )

    // The platform rotates the file; the next token needed (the old one expired) uses it.
    const second = workloadJwt("second")
    fs.writeFileSync(file, second)
    server.expireAccessTokens()
    const result = await toolNamed(source, "docs_whoami").execute({})
    assert.equal(result.isError, false, result.output)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.assertion, x.resource]),
      [
        [JWT_BEARER, first, server.url],
        [JWT_BEARER, second, server.url],
      ],
    )

    // Another connect with the stored token asks for none; once it is gone, the file again.
    const again = await listMcpTools(config, { oauth: { tokenStore } })
    assert.deepEqual(again.status, { docs: "connected" })
    assert.equal(server.log.token.length, 2, "the stored token was used")
    const third = workloadJwt("third")
    fs.writeFileSync(file, third)
    server.expireAccessTokens()
    const fresh = await listMcpTools(config, { oauth: { tokenStore } })
    assert.deepEqual(fresh.status, { docs: "connected" }, fresh.servers.docs?.error)
    assert.deepEqual(
      server.log.token.map((x) => x.assertion),
      [first, second, third],
    )
    assert.deepEqual(server.log.register, [])
    assert.deepEqual(server.log.authorize, [])
  })

  test("an assertion { env }: the variable's value, read when a token is needed", T, async (t) => {
    const server = await oauthServer(t)
    const name = `TOOLNEXUS_TEST_WIF_${process.pid}`
    t.after(() => delete process.env[name])
    // Made once each: a token's iat is the second it was made in.
    const [first, second] = [workloadJwt("env-1"), workloadJwt("env-2")]
    process.env[name] = first
    const source = await loadMcp(
      { docs: { url: server.url, oauth: { grantType: "jwt-bearer", assertion: { env: name } } } },
      { oauth: { tokenStore: memoryStore() } },
    )
    t.after(() => source.close())
    assert.deepEqual(source.status, { docs: "connected" })
    process.env[name] = second
    server.expireAccessTokens()
    const result = await toolNamed(source, "docs_whoami").execute({})
    assert.equal(result.isError, false, result.output)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.assertion]),
      [
        [JWT_BEARER, first],
        [JWT_BEARER, second],
      ],
    )
  })

  test("an assertion that cannot be read fails the server, naming the key, before any token request", T, async (t) => {
    const server = await oauthServer(t)
    const dir = tempDir(t)
    fs.writeFileSync(path.join(dir, "empty.jwt"), "\n")
    const inv = await listMcpTools(
      {
        unset: {
          url: server.url,
          oauth: { grantType: "jwt-bearer", assertion: { env: "TOOLNEXUS_TEST_NO_SUCH_VAR" } },
        },
        missing: {
          url: server.url,
          oauth: { grantType: "jwt-bearer", assertion: { file: path.join(dir, "none.jwt") } },
        },
        empty: {
          url: server.url,
          oauth: { grantType: "jwt-bearer", assertion: { file: path.join(dir, "empty.jwt") } },
        },
      },
      { oauth: { tokenStore: memoryStore() } },
    )
    assert.deepEqual(inv.status, { unset: "failed", missing: "failed", empty: "failed" })
    assert.match(inv.servers.unset?.error ?? "", /"oauth\.assertion".*TOOLNEXUS_TEST_NO_SUCH_VAR is not set/)
    assert.match(inv.servers.missing?.error ?? "", /"oauth\.assertion".*none\.jwt/)
    assert.match(inv.servers.empty?.error ?? "", /"oauth\.assertion".*empty/)
    assert.deepEqual(server.log.token, [], "no token request")
  })

  test("invalid_grant: the server fails, once, naming itself and the error; no other grant is tried", T, async (t) => {
    const server = await oauthServer(t, { jwtBearerError: "invalid_grant" })
    const assertion = workloadJwt("refused")
    const entry = { docs: { url: server.url, oauth: { grantType: "jwt-bearer", assertion } } }
    // loadMcp in a process of its own, for its stderr line; a person is there to ask.
    const run = await runNode(
      `
      import { loadMcp } from "toolnexus"
      const onAuthorize = async (url) => { console.log("ASKED " + url) }
      const source = await loadMcp(${JSON.stringify(entry)}, { oauth: { onAuthorize } })
      console.log(JSON.stringify(source.status))
      await source.close()`,
      { env: { ...process.env, XDG_CONFIG_HOME: tempDir(t) } },
    )
    assertCleanExit(run)
    assert.equal(run.stdout.trim(), '{"docs":"failed"}', run.stderr)
    const lines = failureLines(run.stderr, "docs")
    assert.equal(lines.length, 1, run.stderr)
    assert.match(lines[0]!, /invalid_grant/)
    assert.ok(!run.stderr.includes(assertion) && !run.stdout.includes(assertion), "the assertion was shown")
    assert.deepEqual(
      server.log.token.map((x) => x.grant),
      [JWT_BEARER],
      "exactly one token request",
    )
    assert.deepEqual(server.log.register, [], "no registration")
    assert.deepEqual(server.log.authorize, [], "no authorization request")

    // The reason as listMcpTools reports it.
    const inv = await listMcpTools(entry, { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } })
    assert.deepEqual(inv.status, { docs: "failed" })
    assert.match(inv.servers.docs?.error ?? "", /invalid_grant/)
    assert.ok(!(inv.servers.docs?.error ?? "").includes(assertion))
    assert.equal(server.log.token.length, 2, "one more token request, not a retry")
    assert.deepEqual(server.log.authorize, [])
  })

  for (const code of ["invalid_scope", "unauthorized_client"]) {
    test(`${code}: the reason names the error, and nothing else is tried`, T, async (t) => {
      const server = await oauthServer(t, { jwtBearerError: code })
      const inv = await listMcpTools(
        { docs: { url: server.url, oauth: { grantType: "jwt-bearer", assertion: workloadJwt(code) } } },
        { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
      )
      assert.deepEqual(inv.status, { docs: "failed" })
      assert.match(inv.servers.docs?.error ?? "", new RegExp(code))
      assert.equal(server.log.token.length, 1)
      assert.deepEqual(server.log.register, [])
      assert.deepEqual(server.log.authorize, [])
    })
  }
})

describe("enterprise (ID token → ID-JAG → access token)", () => {
  /** An enterprise entry whose IdP is the fixture's /idp/token (its issuer `<base>/idp`). */
  const enterprise = (server: { url: string; base: string }, oauth: object, idp: object) => ({
    docs: {
      url: server.url,
      oauth: {
        grantType: "enterprise",
        ...oauth,
        idp: { tokenEndpoint: `${server.base}/idp/token`, issuer: `${server.base}/idp`, ...idp },
      },
    },
  })

  test("public clients: the token exchange at the IdP, then the ID-JAG as the jwt-bearer assertion", T, async (t) => {
    const server = await oauthServer(t, { idp: { clientId: "mcp-client" } })
    const idToken = workloadJwt("person")
    const person = noPerson()
    const source = await loadMcp(enterprise(server, { clientId: "mcp-client" }, { clientId: "idp-client", idToken }), {
      oauth: { tokenStore: memoryStore(), onAuthorize: person.onAuthorize },
    })
    t.after(() => source.close())
    assert.deepEqual(source.status, { docs: "connected" })
    const result = await toolNamed(source, "docs_whoami").execute({})
    assert.equal(result.isError, false, result.output)

    assert.equal(server.log.idp.length, 1)
    const [exchange] = server.log.idp
    assert.equal(exchange!.grant_type, "urn:ietf:params:oauth:grant-type:token-exchange")
    assert.equal(exchange!.requested_token_type, "urn:ietf:params:oauth:token-type:id-jag")
    assert.equal(exchange!.subject_token_type, "urn:ietf:params:oauth:token-type:id_token")
    assert.equal(exchange!.subject_token, idToken)
    assert.equal(exchange!.audience, server.base, "the authorization server's issuer")
    assert.equal(exchange!.resource, server.url)
    assert.equal(exchange!.client_id, "idp-client")

    assert.equal(server.log.token.length, 1)
    const [redeem] = server.log.token
    assert.equal(redeem!.grant, JWT_BEARER)
    assert.equal(redeem!.resource, server.url)
    assert.equal(redeem!.client_id, "mcp-client")
    const jag = decodeJwt(redeem!.assertion ?? "")
    assert.equal(jag.header.typ, "oauth-id-jag+jwt", "the IdP's ID-JAG is what was sent")
    assert.equal(jag.claims.aud, server.base)
    assert.equal(jag.claims.resource, server.url)
    assert.deepEqual(server.log.register, [])
    assert.deepEqual(server.log.authorize, [])
    assert.equal(person.asked.length, 0)
  })

  test("confidential clients: HTTP Basic at both, scopes at both, the ID token from { env }", T, async (t) => {
    const server = await oauthServer(t, { idp: { clientId: "mcp-client" }, scopes: ["read"] })
    const name = `TOOLNEXUS_TEST_ID_TOKEN_${process.pid}`
    t.after(() => delete process.env[name])
    const idToken = workloadJwt("person-env")
    process.env[name] = idToken
    const inv = await listMcpTools(
      enterprise(
        server,
        { clientId: "mcp-client", clientSecret: "as-secret", scopes: ["read"] },
        { clientId: "idp-client", clientSecret: "idp-secret", idToken: { env: name } },
      ),
      { oauth: { tokenStore: memoryStore() } },
    )
    assert.deepEqual(inv.status, { docs: "connected" }, inv.servers.docs?.error)
    const [exchange] = server.log.idp
    assert.equal(basic(exchange!.authorization), "idp-client:idp-secret")
    assert.equal(exchange!.subject_token, idToken)
    assert.equal(exchange!.scope, "read")
    const [redeem] = server.log.token
    assert.equal(basic(redeem!.authorization), "mcp-client:as-secret")
    assert.equal(redeem!.grant, JWT_BEARER)
    assert.equal(redeem!.resource, server.url)
    assert.equal(redeem!.scope, "read")
    // No secret in what toolnexus shows.
    for (const secret of ["as-secret", "idp-secret", idToken]) {
      assert.ok(!JSON.stringify(inv).includes(secret), "a secret was shown")
    }
  })

  test("the IdP refusing the exchange fails the server; the authorization server is never asked", T, async (t) => {
    const server = await oauthServer(t, { idp: { clientId: "mcp-client", error: "invalid_grant" } })
    const inv = await listMcpTools(
      enterprise(server, { clientId: "mcp-client" }, { clientId: "idp-client", idToken: "expired-id-token" }),
      { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
    )
    assert.deepEqual(inv.status, { docs: "failed" })
    assert.match(inv.servers.docs?.error ?? "", /invalid_grant/)
    assert.equal(server.log.idp.length, 1)
    assert.deepEqual(server.log.token, [], "no token request at the authorization server")
    assert.deepEqual(server.log.register, [])
    assert.deepEqual(server.log.authorize, [])
  })
})

describe("resource on every token request", () => {
  test("authorization code and refresh", T, async (t) => {
    const server = await oauthServer(t, { requireResource: true })
    const tokenStore = memoryStore()
    const entry = { docs: { url: server.url } }
    const first = await listMcpTools(entry, { oauth: { tokenStore, onAuthorize: followToRedirect } })
    assert.deepEqual(first.status, { docs: "connected" }, first.servers.docs?.error)
    server.expireAccessTokens()
    const second = await listMcpTools(entry, { oauth: { tokenStore } })
    assert.deepEqual(second.status, { docs: "connected" }, second.servers.docs?.error)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.resource]),
      [
        ["authorization_code", server.url],
        ["refresh_token", server.url],
      ],
    )
    assert.equal(server.log.authorize.length, 1, "the refresh asked no person")
  })

  test("client credentials with a secret", T, async (t) => {
    const server = await oauthServer(t, { confidential: true, requireResource: true })
    const registered = await fetch(`${server.base}/register`, { method: "POST", body: "{}" }).then((r) => r.json())
    const inv = await listMcpTools(
      {
        agent: {
          url: server.url,
          oauth: {
            grantType: "client_credentials",
            clientId: registered.client_id,
            clientSecret: registered.client_secret,
          },
        },
      },
      { oauth: { tokenStore: memoryStore() } },
    )
    assert.deepEqual(inv.status, { agent: "connected" }, inv.servers.agent?.error)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.resource]),
      [["client_credentials", server.url]],
    )
  })

  test("client credentials with private_key_jwt", T, async (t) => {
    const server = await oauthServer(t, { confidential: true, requireResource: true })
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    const registered = await fetch(`${server.base}/register`, {
      method: "POST",
      body: JSON.stringify({ public_key_pem: publicKey.export({ type: "spki", format: "pem" }) }),
    }).then((r) => r.json())
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    const inv = await listMcpTools(
      {
        agent: {
          url: server.url,
          oauth: { grantType: "client_credentials", clientId: registered.client_id, privateKey: pem },
        },
      },
      { oauth: { tokenStore: memoryStore() } },
    )
    assert.deepEqual(inv.status, { agent: "connected" }, inv.servers.agent?.error)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.resource]),
      [["client_credentials", server.url]],
    )
  })

  test("jwt-bearer, and a new token after the old one expired", T, async (t) => {
    const server = await oauthServer(t, { requireResource: true })
    const tokenStore = memoryStore()
    const entry = { docs: { url: server.url, oauth: { grantType: "jwt-bearer", assertion: workloadJwt("r") } } }
    const first = await listMcpTools(entry, { oauth: { tokenStore } })
    assert.deepEqual(first.status, { docs: "connected" }, first.servers.docs?.error)
    server.expireAccessTokens()
    const second = await listMcpTools(entry, { oauth: { tokenStore } })
    assert.deepEqual(second.status, { docs: "connected" }, second.servers.docs?.error)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.resource]),
      [
        [JWT_BEARER, server.url],
        [JWT_BEARER, server.url],
      ],
    )
  })

  test("enterprise", T, async (t) => {
    const server = await oauthServer(t, { requireResource: true, idp: { clientId: "mcp-client" } })
    const inv = await listMcpTools(
      {
        docs: {
          url: server.url,
          oauth: {
            grantType: "enterprise",
            clientId: "mcp-client",
            idp: {
              tokenEndpoint: `${server.base}/idp/token`,
              issuer: `${server.base}/idp`,
              clientId: "idp-client",
              idToken: "id-token",
            },
          },
        },
      },
      { oauth: { tokenStore: memoryStore() } },
    )
    assert.deepEqual(inv.status, { docs: "connected" }, inv.servers.docs?.error)
    assert.deepEqual(
      server.log.idp.map((x) => x.resource),
      [server.url],
    )
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.resource]),
      [[JWT_BEARER, server.url]],
    )
  })
})

describe("private networks", () => {
  const refusal = (what: string, origin: string, host: string, address: string) =>
    `refused ${what} of "docs" at ${origin}: its host ${host} resolves to ${address}, a private network address; nothing was sent to it ("oauth.allowPrivateNetwork": true in the entry allows it)`

  /** Signs in to a fixture bent by `options`, with `oauth` in the entry; what came of it. */
  async function signIn(t: TestContext, options: Parameters<typeof startOAuthServer>[0], oauth: object = {}) {
    const server = await oauthServer(t, options)
    const shown: URL[] = []
    const onAuthorize = async (url: URL) => (shown.push(url), followToRedirect(url))
    const { value: inv, ms } = await timed(() =>
      listMcpTools(
        { docs: { url: server.url, timeout: 5_000, oauth } },
        { oauth: { tokenStore: memoryStore(), onAuthorize } },
      ),
    )
    return { inv, ms, server, shown, error: inv.servers.docs?.error ?? "" }
  }

  const servers = [
    { origin: "https://10.255.0.1", host: "10.255.0.1", address: "10.255.0.1" },
    { origin: "https://[fd00::1]", host: "fd00::1", address: "fd00::1" },
    { origin: "https://169.254.169.254", host: "169.254.169.254", address: "169.254.169.254" },
  ]

  for (const { origin, host, address } of servers) {
    test(`protected resource metadata naming ${origin} as authorization server is refused, quickly`, T, async (t) => {
      const { inv, ms, server, shown, error } = await signIn(t, { authorizationServer: origin })
      assert.deepEqual(inv.status, { docs: "failed" })
      assert.equal(error, refusal("the OAuth metadata document", origin, host, address))
      assert.ok(ms < FAST, `took ${ms} ms`)
      assert.equal(shown.length, 0)
      assert.deepEqual(server.log.register, [])
      assert.deepEqual(server.log.token, [])
    })
  }

  // rmcp itself passes over an authorization server at a private IP literal whatever the
  // client allows; with "allowPrivateNetwork" toolnexus asks such a server's metadata
  // itself, through its guard. A listener at a private address of this machine counts
  // the connections (it speaks no TLS: the sign-in fails after it, with rmcp's reason).
  test("an authorization server at a private address is asked only when allowed", T, async (t) => {
    const address = privateAddress()
    if (!address) return t.skip("this machine has no private network address")
    let connections = 0
    const listener = net.createServer((socket) => (connections++, socket.destroy()))
    await new Promise<void>((resolve) => listener.listen(0, address, resolve))
    t.after(() => new Promise<void>((resolve) => listener.close(() => resolve())))
    const port = (listener.address() as net.AddressInfo).port
    const host = address.includes(":") ? `[${address}]` : address
    const options = { authorizationServer: `https://${host}:${port}` }

    const refused = await signIn(t, options)
    assert.match(refused.error, /a private network address; nothing was sent to it/)
    assert.equal(connections, 0, "nothing connected")

    const allowed = await signIn(t, options, { allowPrivateNetwork: true })
    assert.deepEqual(allowed.inv.status, { docs: "failed" })
    assert.doesNotMatch(allowed.error, /allowPrivateNetwork|private network address/)
    assert.ok(connections >= 1, "its metadata was asked for")
    assert.equal(allowed.shown.length, 0)
  })

  const endpoints = [
    {
      label: "a token endpoint on 10/8 (jwt-bearer)",
      options: { endpoints: { token: "https://10.255.0.1/token" } },
      oauth: { grantType: "jwt-bearer", assertion: "a.b.c" },
      reason: refusal("the token endpoint", "https://10.255.0.1", "10.255.0.1", "10.255.0.1"),
    },
    {
      label: "a token endpoint at an IPv4-mapped 192.168/16 address",
      options: { endpoints: { token: "https://[::ffff:192.168.0.1]/token" } },
      oauth: { grantType: "jwt-bearer", assertion: "a.b.c" },
      reason: refusal("the token endpoint", "https://[::ffff:c0a8:1]", "::ffff:c0a8:1", "::ffff:192.168.0.1"),
    },
    {
      label: "a token endpoint on 100.64/10 (client credentials)",
      options: { endpoints: { token: "https://100.64.0.1/token" }, confidential: true },
      oauth: { grantType: "client_credentials", clientId: "c", clientSecret: "s" },
      reason: refusal("the token endpoint", "https://100.64.0.1", "100.64.0.1", "100.64.0.1"),
    },
    {
      label: "a token endpoint at a cloud metadata service's name",
      options: { endpoints: { token: "https://metadata.google.internal/token" } },
      oauth: { grantType: "jwt-bearer", assertion: "a.b.c" },
      reason: `refused the token endpoint of "docs" at https://metadata.google.internal: metadata.google.internal is a cloud metadata service; nothing was sent to it ("oauth.allowPrivateNetwork": true in the entry allows it)`,
    },
    {
      label: "a registration endpoint on 169.254/16",
      options: { endpoints: { registration: "https://169.254.169.254/register" } },
      oauth: {},
      reason: refusal("the registration endpoint", "https://169.254.169.254", "169.254.169.254", "169.254.169.254"),
    },
    {
      label: "an authorization endpoint on fc00::/7",
      options: { endpoints: { authorization: "https://[fd00::1]/authorize" } },
      oauth: {},
      reason: refusal("the authorization endpoint", "https://[fd00::1]", "fd00::1", "fd00::1"),
    },
    {
      label: "a clientMetadataUrl on 172.16/12",
      options: { cimd: true },
      oauth: { clientMetadataUrl: "https://172.16.0.1/client.json" },
      reason: refusal('the "clientMetadataUrl"', "https://172.16.0.1", "172.16.0.1", "172.16.0.1"),
    },
  ]

  for (const { label, options, oauth, reason } of endpoints) {
    test(`${label} is refused before anything is sent`, T, async (t) => {
      const { inv, ms, server, shown, error } = await signIn(t, options, oauth)
      assert.deepEqual(inv.status, { docs: "failed" })
      assert.equal(error, reason)
      assert.ok(ms < FAST, `took ${ms} ms`)
      assert.equal(shown.length, 0, "the browser was not sent there")
      assert.deepEqual(server.log.token, [])
    })
  }

  test(
    'with "allowPrivateNetwork": true, a private token endpoint is tried: a connection error, not the refusal',
    T,
    async (t) => {
      const { inv, error } = await signIn(
        t,
        { endpoints: { token: "https://10.255.0.1/token" } },
        { grantType: "jwt-bearer", assertion: "a.b.c", allowPrivateNetwork: true },
      )
      assert.deepEqual(inv.status, { docs: "failed" })
      assert.doesNotMatch(error, /allowPrivateNetwork|private network address/)
      assert.match(error, /error sending request|connect|unreachable|timed out|timeout/i)
    },
  )

  /** A private (non-loopback) address of this machine, if it has one. */
  function privateAddress(): string | undefined {
    const isPrivate = (a: string) =>
      /^10\./.test(a) ||
      /^192\.168\./.test(a) ||
      /^172\.(1[6-9]|2\d|3[01])\./.test(a) ||
      /^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./.test(a) ||
      /^f[cd][0-9a-f]{2}:/i.test(a)
    const all = Object.values(os.networkInterfaces()).flatMap((x) => x ?? [])
    return all.find((x) => !x.internal && isPrivate(x.address))?.address
  }

  test("the token request reaches a private address only when allowed", T, async (t) => {
    const address = privateAddress()
    if (!address) return t.skip("this machine has no private network address")
    // A listener there counting connections (it speaks no TLS: the request fails after).
    let connections = 0
    const listener = net.createServer((socket) => (connections++, socket.destroy()))
    await new Promise<void>((resolve) => listener.listen(0, address, resolve))
    t.after(() => new Promise<void>((resolve) => listener.close(() => resolve())))
    const port = (listener.address() as net.AddressInfo).port
    const host = address.includes(":") ? `[${address}]` : address
    const options = { endpoints: { token: `https://${host}:${port}/token` } }
    const oauth = { grantType: "jwt-bearer", assertion: "a.b.c" }

    const refused = await signIn(t, options, oauth)
    assert.deepEqual(refused.inv.status, { docs: "failed" })
    assert.match(refused.error, /a private network address; nothing was sent to it/)
    assert.equal(connections, 0, "nothing connected")

    const allowed = await signIn(t, options, { ...oauth, allowPrivateNetwork: true })
    assert.deepEqual(allowed.inv.status, { docs: "failed" })
    assert.doesNotMatch(allowed.error, /allowPrivateNetwork/)
    assert.ok(connections >= 1, "the token request connected")
  })

  test("loopback stays allowed without allowPrivateNetwork", T, async (t) => {
    const { inv, server } = await signIn(t, {}, { grantType: "jwt-bearer", assertion: "a.b.c" })
    assert.deepEqual(inv.status, { docs: "connected" }, inv.servers.docs?.error)
    assert.equal(server.log.token.length, 1)
  })
})

describe("config", () => {
  const url = "https://mcp.example.invalid/mcp"
  const malformed = {
    noAssertion: { entry: { url, oauth: { grantType: "jwt-bearer" } }, key: /"oauth\.assertion"/ },
    numberAssertion: { entry: { url, oauth: { grantType: "jwt-bearer", assertion: 42 } }, key: /"oauth\.assertion"/ },
    otherObjectAssertion: {
      entry: { url, oauth: { grantType: "jwt-bearer", assertion: { path: "token.jwt" } } },
      key: /"oauth\.assertion"/,
    },
    noTokenEndpoint: {
      entry: { url, oauth: { grantType: "enterprise", clientId: "c", idp: { clientId: "i", idToken: "t" } } },
      key: /tokenEndpoint/,
    },
    numberIdToken: {
      entry: {
        url,
        oauth: { grantType: "enterprise", clientId: "c", idp: { tokenEndpoint: url, clientId: "i", idToken: 7 } },
      },
      key: /"oauth\.idp\.idToken"/,
    },
    stringAllowPrivate: { entry: { url, oauth: { allowPrivateNetwork: "yes" } }, key: /"oauth\.allowPrivateNetwork"/ },
    unknownGrant: { entry: { url, oauth: { grantType: "saml" } }, key: /"oauth\.grantType"/ },
  }

  test(
    "a malformed jwt-bearer, enterprise or allowPrivateNetwork fails its own server, naming the key",
    T,
    async (t) => {
      const server = await oauthServer(t)
      const config: Record<string, object> = Object.fromEntries(
        Object.entries(malformed).map(([name, { entry }]) => [name, entry]),
      )
      config.good = { url: server.url, oauth: { grantType: "jwt-bearer", assertion: { env: "TOOLNEXUS_TEST_GOOD" } } }
      process.env.TOOLNEXUS_TEST_GOOD = "a.b.c"
      t.after(() => delete process.env.TOOLNEXUS_TEST_GOOD)
      // parseMcpConfig returns entries as given; it is loading that reads them.
      assert.deepEqual(Object.keys(parseMcpConfig({ mcpServers: config })), Object.keys(config))
      const { value: inv, ms } = await timed(() => listMcpTools(config, { oauth: { tokenStore: memoryStore() } }))
      assert.ok(ms < FAST, `took ${ms} ms`)
      for (const [name, { key }] of Object.entries(malformed)) {
        assert.equal(inv.status[name], "failed", name)
        assert.match(inv.servers[name]?.error ?? "", key, name)
      }
      assert.equal(inv.status.good, "connected", inv.servers.good?.error)
      assert.deepEqual(
        server.log.token.map((x) => x.grant),
        [JWT_BEARER],
        "only the good entry signed in",
      )
    },
  )

  test("a valid jwt-bearer entry parses as given", () => {
    const entry = {
      url,
      oauth: { grantType: "jwt-bearer", clientId: "w", assertion: { file: "/var/run/token" }, scopes: ["a"] },
    }
    assert.deepEqual(parseMcpConfig({ mcpServers: { wif: entry } }).wif, entry)
  })

  test("the shipped schema knows the new grant types and keys", async () => {
    const run = await runProcess([path.join(ROOT, "bin", "toolnexus.js"), "schema"])
    assert.equal(run.code, 0, run.stderr)
    const schema = JSON.parse(run.stdout)
    const defs = schema.$defs
    const grantTypes = JSON.stringify(defs)
    for (const grant of ["jwt-bearer", "enterprise"]) {
      assert.ok(grantTypes.includes(`"${grant}"`), `the schema does not list ${grant}`)
    }
    type Def = { properties?: Record<string, unknown> }
    const client = (Object.values(defs) as Def[]).find((def) => def.properties?.grantType !== undefined)
    for (const key of ["assertion", "idp", "allowPrivateNetwork"]) {
      assert.ok(client?.properties && key in client.properties, `the schema's oauth object has no ${key}`)
    }
  })
})
