// serveMcp as an OAuth resource server, from the outside: the protected-resource metadata
// (RFC 9728) it serves, the challenges it answers without a token or with a bad one, the
// JWT access tokens (RS256 and ES256) of a real little authorization server it takes (and
// the ones it refuses), scopes per path, how it finds and caches the key set, and option
// checks. The authorization server is a node:http server on 127.0.0.1 whose keys are made
// with node:crypto, and whose tokens the tests sign themselves.
import assert from "node:assert/strict"
import crypto, { type KeyObject } from "node:crypto"
import { once } from "node:events"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { describe, test, type TestContext } from "node:test"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { createMcpStore, serveMcp } from "toolnexus"
import type { McpGateway, McpStore, McpStoreView, ServeMcpOptions, ServeOAuthOptions } from "toolnexus"
import { local, toolsFlag } from "./helpers.js"
import { at, cleanup, connectV1, serveView, v1Http, type Later } from "./serve-helpers.js"
import { initialize, openSession, post, rawOf, sessionHeaders, show, type Raw } from "./serve-helpers.js"
import { invalidArgument, sorted, T, textOf } from "./serve-helpers.js"

const WELL_KNOWN = "/.well-known/oauth-protected-resource"

const nowSecs = () => Math.floor(Date.now() / 1000)

// ---------------------------------------------------------------- keys and tokens

interface SigningKey {
  kid: string
  alg: "ES256" | "RS256"
  privateKey: KeyObject
  publicKey: KeyObject
}

function ecKey(kid: string): SigningKey {
  const { privateKey, publicKey } = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" })
  return { kid, alg: "ES256", privateKey, publicKey }
}

function rsaKey(kid: string): SigningKey {
  const { privateKey, publicKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 })
  return { kid, alg: "RS256", privateKey, publicKey }
}

/** The issuer's keys (in its JWK set) and one the set does not hold, under the EC key's kid. */
const EC = ecKey("ec-1")
const RSA = rsaKey("rsa-1")
const IMPOSTOR = ecKey("ec-1")

const publicJwk = (key: SigningKey) => ({
  ...key.publicKey.export({ format: "jwk" }),
  kid: key.kid,
  alg: key.alg,
  use: "sig",
})

const b64url = (data: string | Buffer) => Buffer.from(data).toString("base64url")

/** `head.body` of a JWT with `header` and `claims`. */
const signingInput = (header: object, claims: object) =>
  `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`

/** A JWT signed with `key` (ES256 signatures in the JOSE form, r || s). */
function sign(key: SigningKey, claims: object, header: object = {}): string {
  const input = signingInput({ alg: key.alg, kid: key.kid, typ: "at+jwt", ...header }, claims)
  const data = Buffer.from(input)
  const signature =
    key.alg === "ES256"
      ? crypto.sign("sha256", data, { key: key.privateKey, dsaEncoding: "ieee-p1363" })
      : crypto.sign("sha256", data, key.privateKey)
  return `${input}.${b64url(signature)}`
}

// ---------------------------------------------------------------- the authorization server

interface AuthServerOptions {
  /** A path after the origin in the issuer identifier, e.g. "/tenant". */
  issuerPath?: string
  /** Where it publishes its `jwks_uri`: RFC 8414 metadata (default), only OpenID discovery, or nowhere. */
  discovery?: "rfc8414" | "openid" | "none"
}

interface AuthServer {
  origin: string
  issuer: string
  jwksUri: string
  /** Every path requested, in order. */
  requests: string[]
  /** How many requests each path got. */
  hits(path: string): number
  /** The RFC 8414 metadata path of this issuer. */
  metadataPath: string
  /** A token of this issuer for `resource`, valid for five minutes, with `extra` claims on top. */
  token(resource: string, extra?: Record<string, unknown>, key?: SigningKey): string
}

async function authServer(t: TestContext, options: AuthServerOptions = {}): Promise<AuthServer> {
  const requests: string[] = []
  const documents = new Map<string, unknown>()
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname
    requests.push(path)
    const doc = documents.get(path)
    if (req.method !== "GET" || doc === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found")
      return
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(doc))
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const issuerPath = options.issuerPath ?? ""
  const issuer = `${origin}${issuerPath}`
  const jwksUri = `${origin}/jwks`
  const metadataPath = `/.well-known/oauth-authorization-server${issuerPath}`
  documents.set("/jwks", { keys: [publicJwk(EC), publicJwk(RSA)] })
  const discovery = options.discovery ?? "rfc8414"
  if (discovery === "rfc8414") documents.set(metadataPath, { issuer, jwks_uri: jwksUri })
  if (discovery === "openid")
    documents.set(`${issuerPath}/.well-known/openid-configuration`, { issuer, jwks_uri: jwksUri })
  return {
    origin,
    issuer,
    jwksUri,
    requests,
    metadataPath,
    hits: (path) => requests.filter((p) => p === path).length,
    token(resource, extra = {}, key = EC) {
      const now = nowSecs()
      return sign(key, { iss: issuer, aud: resource, sub: "user-1", iat: now, exp: now + 300, ...extra })
    },
  }
}

// ---------------------------------------------------------------- the gateway

/** A store with one server of its own (`plain`: echo) and agent a's (`mine`: alpha), both listed. */
async function makeStore(defer: Later): Promise<McpStore> {
  const store = createMcpStore({ mcpServers: { plain: local(toolsFlag(["echo"])) } })
  defer(() => store.close())
  store.forAgent("a").addServers({ mcpServers: { mine: local(toolsFlag(["alpha"])) } })
  await store.listToolsAsync()
  await store.forAgent("a").listToolsAsync()
  assert.ok(
    store.tools().some((x) => x.name.endsWith("echo")),
    `store tools: ${JSON.stringify(store.status())}`,
  )
  assert.equal(store.forAgent("a").tools().length, 1, JSON.stringify(store.forAgent("a").status()))
  return store
}

interface Kit {
  store: McpStore
  as: AuthServer
  defer: Later
  serve(oauth: Partial<ServeOAuthOptions>, view?: McpStoreView): Promise<McpGateway>
  connect(url: string, token: string): Promise<Client>
}

async function kit(t: TestContext, options: AuthServerOptions = {}): Promise<Kit> {
  const defer = cleanup(t)
  const as = await authServer(t, options)
  const store = await makeStore(defer)
  return {
    store,
    as,
    defer,
    serve: (oauth, view = store) => serveView(defer, view, { auth: { oauth: { issuer: as.issuer, ...oauth } } }),
    // An SDK v1 client with the bearer token on every request.
    connect: async (url, token) => (await v1Http(defer, url, { headers: bearer(token) })).client,
  }
}

const originOf = (gateway: McpGateway) => new URL(gateway.url!).origin

// ---------------------------------------------------------------- raw HTTP

async function get(url: string): Promise<Raw> {
  return rawOf(await fetch(url, { signal: AbortSignal.timeout(10_000) }))
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** Initializes at `url` with `token`; asserts the gateway let it in. */
async function admitted(url: string, token: string, what = token): Promise<Raw> {
  const raw = await post(url, initialize(), bearer(token))
  assert.equal(raw.status, 200, `${what} at ${url}: ${show(raw)}`)
  assert.ok(raw.rpc?.result, `${what} at ${url}: initialize answered no result: ${show(raw)}`)
  return raw
}

/** The challenge a refusal at `path` of `gateway` starts with. */
const challengeStart = (gateway: McpGateway, path: string) =>
  `Bearer resource_metadata="${originOf(gateway)}${WELL_KNOWN}${path}"`

/** Asserts `raw` is a 401 for an invalid token with the challenge of `path`, and returns its body. */
function assertInvalidToken(raw: Raw, gateway: McpGateway, path: string, what: string): string {
  assert.equal(raw.status, 401, `${what}: ${show(raw)}`)
  const challenge = raw.headers.get("www-authenticate") ?? ""
  assert.ok(challenge.startsWith(challengeStart(gateway, path)), `${what}: challenge ${show(raw)}`)
  assert.match(challenge, /error="invalid_token"/, `${what}: ${show(raw)}`)
  assert.equal(raw.headers.get("mcp-session-id"), null, `${what}: ${show(raw)}`)
  assert.equal(raw.rpc?.result, undefined, `${what}: ${show(raw)}`)
  assert.match(raw.headers.get("content-type") ?? "", /^text\/plain/, `${what}: ${show(raw)}`)
  assert.ok(raw.text.trim().length > 0, `${what}: the body says nothing: ${show(raw)}`)
  return raw.text
}

// ---------------------------------------------------------------- metadata

describe("serveMcp oauth: protected-resource metadata", T, () => {
  test("served at the three well-known paths, with the default resource, then a configured one", async (t) => {
    const { store, as, serve } = await kit(t)
    const scopes = { "/mcp": ["read", "admin"], "/agents/a/mcp": "agent:a" }
    const gateway = await serve({ scopes })
    const origin = originOf(gateway)
    assert.match(origin, /^http:\/\/127\.0\.0\.1:\d+$/)
    const expected = {
      resource: origin,
      authorization_servers: [as.issuer],
      scopes_supported: ["admin", "agent:a", "read"],
      bearer_methods_supported: ["header"],
    }
    for (const path of [WELL_KNOWN, `${WELL_KNOWN}/mcp`, `${WELL_KNOWN}/agents/a/mcp`]) {
      const raw = await get(at(gateway, path))
      assert.equal(raw.status, 200, `${path}: ${show(raw)}`)
      assert.match(raw.headers.get("content-type") ?? "", /^application\/json/, `${path}: ${show(raw)}`)
      assert.deepEqual(JSON.parse(raw.text), expected, path)
    }
    // No token is needed for it, nor does serving it fetch anything from the authorization server.
    assert.deepEqual(as.requests, [])

    // A configured resource is the one named, and the one tokens must be for.
    const resource = "https://mcp.example.com/api"
    const named = await serve({ resource }, store)
    for (const path of [WELL_KNOWN, `${WELL_KNOWN}/mcp`, `${WELL_KNOWN}/agents/a/mcp`]) {
      const raw = await get(at(named, path))
      assert.equal(raw.status, 200, `${path}: ${show(raw)}`)
      assert.match(raw.headers.get("content-type") ?? "", /^application\/json/, `${path}: ${show(raw)}`)
      assert.deepEqual(
        JSON.parse(raw.text),
        { resource, authorization_servers: [as.issuer], scopes_supported: [], bearer_methods_supported: ["header"] },
        path,
      )
    }
    await admitted(named.url!, as.token(resource), "a token for the configured resource")
    await admitted(named.url!, as.token(`${resource}/`), "a token for the configured resource with a final /")
    const forOrigin = await post(named.url!, initialize(), bearer(as.token(originOf(named))))
    assert.equal(forOrigin.status, 401, `a token for the origin, not the configured resource: ${show(forOrigin)}`)
    assert.match(forOrigin.headers.get("www-authenticate") ?? "", /error="invalid_token"/, show(forOrigin))
  })
})

// ---------------------------------------------------------------- tokens

describe("serveMcp oauth: tokens", T, () => {
  test("no token: 401 with the challenge naming the metadata; valid ES256 and RS256 tokens through the SDK client", async (t) => {
    const { store, as, serve, connect } = await kit(t)
    const gateway = await serve({})
    const resource = originOf(gateway)

    for (const path of ["/mcp", "/agents/a/mcp"]) {
      const raw = await post(at(gateway, path), initialize())
      assert.equal(raw.status, 401, `${path}: ${show(raw)}`)
      assert.equal(raw.headers.get("www-authenticate"), challengeStart(gateway, path), `${path}: ${show(raw)}`)
      assert.equal(raw.headers.get("mcp-session-id"), null, show(raw))
      assert.match(raw.headers.get("content-type") ?? "", /^text\/plain/, show(raw))
      assert.ok(raw.text.trim().length > 0, `the body says nothing: ${show(raw)}`)
    }
    // An empty bearer, or another scheme, is no token either.
    for (const authorization of ["Bearer ", "Basic dXNlcjpwYXNz"]) {
      const raw = await post(gateway.url!, initialize(), { authorization })
      assert.equal(raw.status, 401, `${authorization}: ${show(raw)}`)
      assert.ok(raw.headers.get("www-authenticate")?.startsWith(challengeStart(gateway, "/mcp")), show(raw))
    }

    const echo = store.tools().find((x) => x.name.endsWith("echo"))!
    for (const key of [EC, RSA]) {
      const client = await connect(gateway.url!, as.token(resource, {}, key))
      assert.deepEqual(sorted((await client.listTools()).tools), sorted(store.tools()), key.alg)
      const called = await client.callTool({ name: echo.name, arguments: { text: `hi ${key.alg}` } })
      assert.notEqual(called.isError, true, JSON.stringify(called))
      assert.deepEqual(JSON.parse(textOf(called)), { text: `hi ${key.alg}` }, key.alg)

      const agent = await connect(at(gateway, "/agents/a/mcp"), as.token(resource, {}, key))
      assert.deepEqual(sorted((await agent.listTools()).tools), sorted(store.forAgent("a").tools()), key.alg)
    }
    // Without a token the SDK client does not get in.
    await assert.rejects(connectV1(gateway.url!))
  })

  test("accepted at the edges: aud as an array or with a final /, exp and nbf within the leeway, scp", async (t) => {
    const { as, serve } = await kit(t)
    const gateway = await serve({})
    const resource = originOf(gateway)
    const now = nowSecs()
    const fine: Array<[string, Record<string, unknown>]> = [
      ["aud an array naming the resource", { aud: ["https://other.example", resource] }],
      ["aud with a final /", { aud: `${resource}/` }],
      ["exp 10 s ago", { exp: now - 10 }],
      ["nbf 10 s ahead", { nbf: now + 10 }],
      ["nbf in the past", { nbf: now - 60 }],
    ]
    for (const [what, claims] of fine) await admitted(gateway.url!, as.token(resource, claims), what)
  })

  test("refused tokens: 401 with error=invalid_token and a reason", async (t) => {
    const { as, serve } = await kit(t)
    const gateway = await serve({})
    const resource = originOf(gateway)
    const now = nowSecs()
    // The key set is reachable: a good token gets in first.
    await admitted(gateway.url!, as.token(resource), "a valid token")

    const validClaims = { iss: as.issuer, aud: resource, iat: now, exp: now + 300 }
    const rsaPem = RSA.publicKey.export({ format: "pem", type: "spki" }) as string
    const ecPem = EC.publicKey.export({ format: "pem", type: "spki" }) as string
    const hs256 = (kid: string, secret: string) => {
      const input = signingInput({ alg: "HS256", kid, typ: "at+jwt" }, validClaims)
      return `${input}.${b64url(crypto.createHmac("sha256", secret).update(input).digest())}`
    }
    const good = as.token(resource)
    const [goodHead, goodBody] = good.split(".")

    const refused: Array<[string, string, RegExp?]> = [
      ["wrong iss", as.token(resource, { iss: "http://127.0.0.1:1/other-issuer" }), /iss/],
      ["iss with a final / the issuer has not", as.token(resource, { iss: `${as.issuer}/` }), /iss/],
      ["aud of another resource", as.token(resource, { aud: "https://other.example/mcp" }), /aud/],
      [
        "aud an array of other resources",
        as.token(resource, { aud: ["https://a.example", "https://b.example"] }),
        /aud/,
      ],
      ["no aud", as.token(resource, { aud: undefined }), /aud/],
      ["expired", as.token(resource, { iat: now - 3600, exp: now - 120 }), /exp/],
      ["no exp", as.token(resource, { exp: undefined }), /exp/],
      ["nbf an hour ahead", as.token(resource, { nbf: now + 3600 }), /nbf/],
      ["signed by a key not in the set (same kid)", sign(IMPOSTOR, validClaims)],
      ["RS256 header over an ES256 key", sign({ ...RSA, kid: EC.kid }, validClaims)],
      ["alg none, unsigned", `${signingInput({ alg: "none", kid: EC.kid, typ: "at+jwt" }, validClaims)}.`],
      ["alg none, no kid", `${signingInput({ alg: "none", typ: "at+jwt" }, validClaims)}.`],
      ["HS256 with the RSA public key as secret", hs256(RSA.kid, rsaPem)],
      ["HS256 with the EC public key as secret", hs256(EC.kid, ecPem)],
      [
        "claims swapped after signing",
        `${goodHead}.${b64url(JSON.stringify({ ...validClaims, scope: "admin" }))}.${good.split(".")[2]}`,
      ],
      ["garbage text", "this-is-not-a-jwt"],
      ["garbage base64", b64url(crypto.randomBytes(48))],
      ["a JWT of 2 parts", `${goodHead}.${goodBody}`],
      ["a JWT of 4 parts", `${good}.${goodBody}`],
    ]
    for (const [what, token, reason] of refused) {
      const raw = await post(gateway.url!, initialize(), bearer(token))
      const body = assertInvalidToken(raw, gateway, "/mcp", what)
      if (reason) assert.match(body, reason, `${what}: the body does not say why: ${show(raw)}`)
    }
    // Refused at an agent's path just the same, with that path's challenge.
    const raw = await post(at(gateway, "/agents/a/mcp"), initialize(), bearer(as.token(resource, { nbf: now + 3600 })))
    assertInvalidToken(raw, gateway, "/agents/a/mcp", "nbf an hour ahead at /agents/a/mcp")
    // And the gateway still lets a good token in afterwards.
    await admitted(gateway.url!, as.token(resource), "a valid token after the refusals")
  })

  test("every request of a session needs a valid token, not only initialize", async (t) => {
    const { store, as, serve } = await kit(t)
    const gateway = await serve({})
    const resource = originOf(gateway)
    const session = await openSession(gateway.url!, bearer(as.token(resource)))
    const inSession = sessionHeaders(session.id)

    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" }
    const without = await post(gateway.url!, list, inSession)
    assert.equal(without.status, 401, show(without))
    assert.equal(without.rpc?.result, undefined, show(without))
    const expired = await post(gateway.url!, list, {
      ...inSession,
      ...bearer(as.token(resource, { exp: nowSecs() - 120 })),
    })
    assertInvalidToken(expired, gateway, "/mcp", "an expired token in a session")
    // Another valid token (here RS256) carries on the same session.
    const withIt = await post(gateway.url!, list, { ...inSession, ...bearer(as.token(resource, {}, RSA)) })
    assert.equal(withIt.status, 200, show(withIt))
    assert.equal((withIt.rpc?.result?.tools as unknown[]).length, store.tools().length, show(withIt))
  })
})

// ---------------------------------------------------------------- scopes

describe("serveMcp oauth: scopes", T, () => {
  test("a token reaches the paths its scopes open, and gets 403 insufficient_scope elsewhere", async (t) => {
    const { store, as, serve, connect } = await kit(t)
    const gateway = await serve({ scopes: { "/mcp": "admin", "/agents/a/mcp": ["agent:a", "admin"] } })
    const resource = originOf(gateway)
    const agentUrl = at(gateway, "/agents/a/mcp")
    const agentTools = sorted(store.forAgent("a").tools())
    assert.deepEqual(agentTools, ["mine_alpha"])

    // No token: the challenge names the path's scopes.
    const none = await post(gateway.url!, initialize())
    assert.equal(none.status, 401, show(none))
    assert.equal(none.headers.get("www-authenticate"), `${challengeStart(gateway, "/mcp")}, scope="admin"`, show(none))
    const noneAgent = await post(agentUrl, initialize())
    assert.equal(noneAgent.status, 401, show(noneAgent))
    assert.equal(
      noneAgent.headers.get("www-authenticate"),
      `${challengeStart(gateway, "/agents/a/mcp")}, scope="agent:a admin"`,
      show(noneAgent),
    )

    const insufficient = async (url: string, path: string, token: string, what: string) => {
      const raw = await post(url, initialize(), bearer(token))
      assert.equal(raw.status, 403, `${what}: ${show(raw)}`)
      const challenge = raw.headers.get("www-authenticate") ?? ""
      assert.ok(challenge.startsWith(challengeStart(gateway, path)), `${what}: ${show(raw)}`)
      assert.match(challenge, /error="insufficient_scope"/, `${what}: ${show(raw)}`)
      assert.doesNotMatch(challenge, /invalid_token/, `${what}: ${show(raw)}`)
      assert.equal(raw.headers.get("mcp-session-id"), null, `${what}: ${show(raw)}`)
      assert.ok(raw.text.trim().length > 0, `${what}: the body says nothing: ${show(raw)}`)
    }

    // scope "agent:a": the agent's path, not /mcp.
    const agentOnly = as.token(resource, { scope: "agent:a" })
    const a = await connect(agentUrl, agentOnly)
    assert.deepEqual(sorted((await a.listTools()).tools), agentTools)
    const called = await a.callTool({ name: "mine_alpha", arguments: { n: 1 } })
    assert.notEqual(called.isError, true, JSON.stringify(called))
    await insufficient(gateway.url!, "/mcp", agentOnly, 'scope "agent:a" at /mcp')

    // scp ["agent:a"] works like scope.
    const scp = as.token(resource, { scp: ["agent:a"] })
    const viaScp = await connect(agentUrl, scp)
    assert.deepEqual(sorted((await viaScp.listTools()).tools), agentTools)
    await insufficient(gateway.url!, "/mcp", scp, 'scp ["agent:a"] at /mcp')

    // One scope among several, space-separated.
    await admitted(agentUrl, as.token(resource, { scope: "read agent:a write" }), 'scope "read agent:a write"')

    // scope "admin": both paths.
    const admin = as.token(resource, { scope: "admin" }, RSA)
    const main = await connect(gateway.url!, admin)
    assert.deepEqual(sorted((await main.listTools()).tools), sorted(store.tools()))
    const adminAgent = await connect(agentUrl, admin)
    assert.deepEqual(sorted((await adminAgent.listTools()).tools), agentTools)

    // No scope, or others only, or one that merely contains a wanted one: 403 on both.
    for (const claims of [{}, { scope: "read write" }, { scope: "administrator agent:ab" }, { scp: ["agent"] }]) {
      const token = as.token(resource, claims)
      await insufficient(gateway.url!, "/mcp", token, `${JSON.stringify(claims)} at /mcp`)
      await insufficient(agentUrl, "/agents/a/mcp", token, `${JSON.stringify(claims)} at /agents/a/mcp`)
    }
    // An invalid token with the right scope is still 401 invalid_token, not 403.
    const raw = await post(
      gateway.url!,
      initialize(),
      bearer(as.token(resource, { scope: "admin", exp: nowSecs() - 120 })),
    )
    assertInvalidToken(raw, gateway, "/mcp", "an expired admin token")
  })

  test("a path not listed in scopes opens to every valid token", async (t) => {
    const { store, as, serve } = await kit(t)
    const gateway = await serve({ scopes: { "/agents/a/mcp": "agent:a" } })
    const resource = originOf(gateway)
    const none = await post(gateway.url!, initialize())
    assert.equal(none.status, 401, show(none))
    assert.equal(none.headers.get("www-authenticate"), challengeStart(gateway, "/mcp"), show(none))
    const init = await admitted(gateway.url!, as.token(resource), "a token with no scope at /mcp")
    assert.ok(init.headers.get("mcp-session-id"), show(init))
    await admitted(gateway.url!, as.token(resource, { scope: "anything" }), 'scope "anything" at /mcp')
    const raw = await post(at(gateway, "/agents/a/mcp"), initialize(), bearer(as.token(resource)))
    assert.equal(raw.status, 403, show(raw))
    assert.match(raw.headers.get("www-authenticate") ?? "", /error="insufficient_scope"/, show(raw))
    assert.ok(store.tools().length > 0)
  })
})

// ---------------------------------------------------------------- the key set

describe("serveMcp oauth: finding and caching the key set", T, () => {
  test("the key set is fetched once for many requests; discovery through the issuer's RFC 8414 metadata", async (t) => {
    const { store, as, serve } = await kit(t)
    const gateway = await serve({})
    const resource = originOf(gateway)
    assert.deepEqual(as.requests, [], "nothing is fetched before a token comes")

    const init = await admitted(gateway.url!, as.token(resource))
    const session = init.headers.get("mcp-session-id")
    assert.ok(session, show(init))
    const inSession = sessionHeaders(session)
    // 19 more requests, with fresh tokens of both keys.
    for (let i = 0; i < 19; i++) {
      const token = as.token(resource, { jti: `t${i}` }, i % 2 ? RSA : EC)
      const raw = await post(
        gateway.url!,
        { jsonrpc: "2.0", id: i + 2, method: "tools/list" },
        { ...inSession, ...bearer(token) },
      )
      assert.equal(raw.status, 200, `request ${i + 2}: ${show(raw)}`)
      assert.equal((raw.rpc?.result?.tools as unknown[]).length, store.tools().length, show(raw))
    }
    assert.equal(as.hits("/jwks"), 1, `requests to the authorization server: ${JSON.stringify(as.requests)}`)
    assert.equal(as.hits(as.metadataPath), 1, JSON.stringify(as.requests))
    assert.deepEqual(as.requests, [as.metadataPath, "/jwks"])
  })

  test("with jwksUri given, the key set comes from there and no metadata is read", async (t) => {
    const { as, serve } = await kit(t, { discovery: "none" })
    const gateway = await serve({ jwksUri: as.jwksUri })
    const resource = originOf(gateway)
    for (let i = 0; i < 5; i++) await admitted(gateway.url!, as.token(resource, {}, i % 2 ? RSA : EC))
    assert.deepEqual(as.requests, ["/jwks"])
  })

  test("discovery falls back to the issuer's OpenID configuration", async (t) => {
    const { as, serve } = await kit(t, { discovery: "openid" })
    const gateway = await serve({})
    await admitted(gateway.url!, as.token(originOf(gateway)))
    assert.equal(as.hits("/.well-known/openid-configuration"), 1, JSON.stringify(as.requests))
    assert.equal(as.hits("/jwks"), 1, JSON.stringify(as.requests))
  })

  test("an issuer with a path: its metadata at /.well-known/oauth-authorization-server<path>", async (t) => {
    const { as, serve } = await kit(t, { issuerPath: "/tenant/one" })
    assert.equal(as.metadataPath, "/.well-known/oauth-authorization-server/tenant/one")
    const gateway = await serve({})
    await admitted(gateway.url!, as.token(originOf(gateway)))
    assert.equal(as.hits(as.metadataPath), 1, JSON.stringify(as.requests))
    assert.equal(as.hits("/jwks"), 1, JSON.stringify(as.requests))
  })

  test("an authorization server that publishes no key set: tokens are refused with 401 invalid_token", async (t) => {
    const { as, serve } = await kit(t, { discovery: "none" })
    const gateway = await serve({})
    const raw = await post(gateway.url!, initialize(), bearer(as.token(originOf(gateway))))
    assertInvalidToken(raw, gateway, "/mcp", "no key set to be found")
    assert.equal(as.hits("/jwks"), 0, JSON.stringify(as.requests))
  })
})

// ---------------------------------------------------------------- bad options

describe("serveMcp oauth: bad options", T, () => {
  test("bad oauth options are refused with TOOLNEXUS_INVALID_ARGUMENT", async (t) => {
    const { store, as, defer } = await kit(t)
    const issuer = as.issuer
    const bad: Array<[string, unknown]> = [
      ["tokens and oauth together", { tokens: { "/mcp": "secret" }, oauth: { issuer } }],
      ["issuer ftp://", { oauth: { issuer: "ftp://127.0.0.1/as" } }],
      ["issuer not a URL", { oauth: { issuer: "not a url" } }],
      ["issuer a bare host", { oauth: { issuer: "127.0.0.1:9000" } }],
      ["issuer empty", { oauth: { issuer: "" } }],
      ["issuer missing", { oauth: {} }],
      ["issuer a number", { oauth: { issuer: 5 } }],
      ["oauth a string", { oauth: issuer }],
      ["scopes an array", { oauth: { issuer, scopes: ["admin"] } }],
      ["scopes a string", { oauth: { issuer, scopes: "admin" } }],
      ["a scope a number", { oauth: { issuer, scopes: { "/mcp": 5 } } }],
      ["a scope list with a number", { oauth: { issuer, scopes: { "/mcp": ["admin", 5] } } }],
      ["a scope an object", { oauth: { issuer, scopes: { "/mcp": { admin: true } } } }],
    ]
    for (const [what, auth] of bad) {
      let made: McpGateway | undefined
      await assert.rejects(
        async () => {
          made = await serveMcp(store, { auth } as ServeMcpOptions)
        },
        invalidArgument,
        what,
      )
      if (made) defer(() => made!.close())
    }
    // The store is untouched, and the same options without the fault serve.
    const gateway = await serveMcp(store, { auth: { oauth: { issuer, scopes: { "/mcp": ["admin"] } } } })
    defer(() => gateway.close())
    const raw = await get(at(gateway, WELL_KNOWN))
    assert.equal(raw.status, 200, show(raw))
    assert.deepEqual(JSON.parse(raw.text).scopes_supported, ["admin"])
  })
})
