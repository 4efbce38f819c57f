// DPoP (RFC 9449): tokens bound to a key the client holds, against the OAuth fixture
// (fixtures/oauth-server.mjs with `dpop`), which checks every proof it is sent (signature,
// typ, alg, jwk, htm, htu, iat, a jti never seen before, and at the MCP endpoint `ath` and
// the key the token was bound to) and records it. `oauth.dpop` is "auto" (the default:
// used when the authorization server offers ES256), true (required) or false (never);
// the nonce each server asks for is learned and the request sent once more; a token the
// authorization server does not say is DPoP-bound is refused; the key is kept in the
// token store's record beside the tokens it binds, and used again from there.
import assert from "node:assert/strict"
import { createPrivateKey, generateKeyPairSync, type JsonWebKey, randomUUID, sign } from "node:crypto"
import { describe, test } from "node:test"
import { listMcpTools, loadMcp } from "toolnexus"
import { jwkThumbprint, startOAuthServer, tokenHash } from "./fixtures/oauth-server.mjs"
import { toolNamed } from "./helpers.js"
import { followToRedirect, memoryStore, oauthServer } from "./oauth-helpers.js"

const T = { timeout: 60_000 }

type Server = Awaited<ReturnType<typeof startOAuthServer>>

/** The record toolnexus keeps for the one server in `store` (JSON, camelCase keys). */
function recordOf(store: { values: Map<string, string> }) {
  assert.equal(store.values.size, 1, "one record")
  const [text] = store.values.values()
  return JSON.parse(text!) as {
    dpopKey?: string
    credentials?: { token_response?: { access_token?: string; token_type?: string } }
  }
}

/** The thumbprint of the public half of a record's `dpopKey` (base64 PKCS#8 of a P-256 key). */
function storedKeyThumbprint(encoded: string): string {
  const key = createPrivateKey({ key: Buffer.from(encoded, "base64"), format: "der", type: "pkcs8" })
  const jwk = key.export({ format: "jwk" }) as JsonWebKey
  assert.equal(jwk.crv, "P-256")
  return jwkThumbprint(jwk)
}

/** A registered confidential client for the client-credentials grant, as an entry. */
async function agentEntry(server: Server, oauth: object = {}) {
  const registered = await fetch(`${server.base}/register`, { method: "POST", body: "{}" }).then((r) => r.json())
  return {
    agent: {
      url: server.url,
      oauth: {
        grantType: "client_credentials",
        clientId: registered.client_id as string,
        clientSecret: registered.client_secret as string,
        ...oauth,
      },
    },
  } as const
}

const proofs = (server: Server, endpoint: "token" | "mcp") => server.log.dpop.filter((x) => x.endpoint === endpoint)
/** The Authorization schemes the MCP endpoint was sent, requests without one left out. */
const schemes = (server: Server) => [...new Set(server.log.mcp.map((x) => x.scheme).filter((x) => x !== null))]

describe("DPoP, auto (the default)", () => {
  test(
    "offered: the tokens are bound to a key; every MCP request carries DPoP and a fresh proof naming it",
    T,
    async (t) => {
      const server = await oauthServer(t, { dpop: {} })
      const tokenStore = memoryStore()
      // A query on the server's URL: the proofs' htu leaves it out.
      const url = `${server.url}?tenant=t1`
      const source = await loadMcp({ docs: { url } }, { oauth: { tokenStore, onAuthorize: followToRedirect } })
      t.after(() => source.close())
      assert.deepEqual(source.status, { docs: "connected" })
      const result = await toolNamed(source, "docs_whoami").execute({})
      assert.equal(result.isError, false, result.output)
      assert.equal(result.output, "read")

      // The token request: a proof, and a DPoP token issued.
      assert.deepEqual(
        server.log.token.map((x) => [x.grant, x.dpop]),
        [["authorization_code", true]],
      )
      const [atToken, ...noMore] = proofs(server, "token")
      assert.equal(noMore.length, 0)
      assert.equal(atToken!.error, null, "the fixture accepted the proof")
      assert.equal(atToken!.header?.typ, "dpop+jwt")
      assert.equal(atToken!.header?.alg, "ES256")
      const jwk = atToken!.header?.jwk
      assert.deepEqual(Object.keys(jwk).sort(), ["crv", "kty", "x", "y"], "the public key alone")
      assert.equal(jwk.kty, "EC")
      assert.equal(jwk.crv, "P-256")
      assert.equal(atToken!.claims?.htm, "POST")
      assert.equal(atToken!.claims?.htu, `${server.base}/token`)
      assert.ok(Math.abs(atToken!.claims?.iat - Date.now() / 1000) < 60, "iat is now")
      assert.equal(atToken!.claims?.ath, undefined, "no ath at the token endpoint")
      assert.equal(atToken!.claims?.nonce, undefined, "no nonce was asked for")

      const record = recordOf(tokenStore)
      const token = record.credentials?.token_response?.access_token
      assert.ok(token, "the access token is kept")
      assert.match(record.credentials?.token_response?.token_type ?? "", /^dpop$/i)

      // The MCP requests: DPoP, never Bearer, each with a proof by the same key.
      assert.deepEqual(schemes(server), ["DPoP"])
      const withToken = server.log.mcp.filter((x) => x.scheme !== null)
      assert.ok(withToken.some((x) => x.method === "tools/call"))
      assert.ok(
        withToken.every((x) => x.valid),
        JSON.stringify(withToken.filter((x) => !x.valid)),
      )
      const atMcp = proofs(server, "mcp")
      assert.equal(atMcp.length, withToken.length, "a proof with every request")
      for (const proof of atMcp) {
        assert.equal(proof.error, null)
        assert.equal(proof.header?.typ, "dpop+jwt")
        assert.equal(proof.header?.alg, "ES256")
        assert.equal(proof.jkt, atToken!.jkt, "the key the token is bound to")
        assert.equal(proof.claims?.htm, "POST")
        assert.equal(proof.claims?.htu, server.url, "htu without the query")
        assert.equal(proof.claims?.ath, tokenHash(token), "ath is the token's hash")
      }
      const jtis = server.log.dpop.map((x) => x.claims?.jti)
      assert.ok(jtis.every((jti) => typeof jti === "string" && jti.length >= 16))
      assert.equal(new Set(jtis).size, jtis.length, "a fresh jti on every proof")

      // The key is the record's.
      assert.ok(record.dpopKey, "the record keeps the DPoP key")
      assert.equal(storedKeyThumbprint(record.dpopKey), atToken!.jkt)
    },
  )

  test("an expired DPoP token is refreshed with a proof by the same key", T, async (t) => {
    const server = await oauthServer(t, { dpop: {} })
    const source = await loadMcp(
      { docs: { url: server.url } },
      { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
    )
    t.after(() => source.close())
    assert.deepEqual(source.status, { docs: "connected" })
    server.expireAccessTokens()
    const result = await toolNamed(source, "docs_whoami").execute({})
    assert.equal(result.isError, false, result.output)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.dpop]),
      [
        ["authorization_code", true],
        ["refresh_token", true],
      ],
    )
    // The fixture refuses a bound refresh token with another key's proof.
    const keys = new Set(server.log.dpop.map((x) => x.jkt))
    assert.equal(keys.size, 1, "one key throughout")
    assert.ok(
      server.log.dpop.every((x) => x.error === null),
      JSON.stringify(server.log.dpop.filter((x) => x.error)),
    )
    assert.equal(server.log.authorize.length, 1, "no second sign-in")
  })

  test("not offered: bearer tokens, no proof, no key kept", T, async (t) => {
    const server = await oauthServer(t, { confidential: true })
    const tokenStore = memoryStore()
    const inv = await listMcpTools(await agentEntry(server, { dpop: "auto" }), { oauth: { tokenStore } })
    assert.deepEqual(inv.status, { agent: "connected" }, inv.servers.agent?.error)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.dpop]),
      [["client_credentials", false]],
    )
    assert.deepEqual(server.log.dpop, [], "no proof anywhere")
    assert.deepEqual(schemes(server), ["Bearer"])
    assert.equal(recordOf(tokenStore).dpopKey, undefined)
  })
})

describe('DPoP, "oauth.dpop": false and true', () => {
  test("false: never, even when the authorization server offers it", T, async (t) => {
    const server = await oauthServer(t, { confidential: true, dpop: {} })
    const tokenStore = memoryStore()
    const source = await loadMcp(await agentEntry(server, { dpop: false }), { oauth: { tokenStore } })
    t.after(() => source.close())
    assert.deepEqual(source.status, { agent: "connected" })
    const result = await toolNamed(source, "agent_whoami").execute({})
    assert.equal(result.isError, false, result.output)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.dpop]),
      [["client_credentials", false]],
    )
    assert.deepEqual(server.log.dpop, [], "no proof anywhere")
    assert.deepEqual(schemes(server), ["Bearer"])
    assert.equal(recordOf(tokenStore).dpopKey, undefined)
  })

  test("true: an authorization server that does not offer it fails the sign-in, saying why", T, async (t) => {
    const server = await oauthServer(t, { confidential: true })
    const inv = await listMcpTools(await agentEntry(server, { dpop: true }), {
      oauth: { tokenStore: memoryStore() },
    })
    assert.deepEqual(inv.status, { agent: "failed" })
    assert.match(inv.servers.agent?.error ?? "", /requires DPoP \("oauth\.dpop": true\)/)
    assert.deepEqual(server.log.token, [], "no token was asked for")
    assert.deepEqual(schemes(server), [], "no token reached the MCP server")
  })

  test("true: the same with the authorization-code flow, before any person is asked", T, async (t) => {
    const server = await oauthServer(t)
    const shown: URL[] = []
    const inv = await listMcpTools(
      { docs: { url: server.url, oauth: { dpop: true } } },
      { oauth: { tokenStore: memoryStore(), onAuthorize: async (url) => (shown.push(url), followToRedirect(url)) } },
    )
    assert.deepEqual(inv.status, { docs: "failed" })
    assert.match(inv.servers.docs?.error ?? "", /requires DPoP \("oauth\.dpop": true\)/)
    assert.equal(shown.length, 0, "nobody was asked")
    assert.deepEqual(server.log.register, [])
    assert.deepEqual(server.log.token, [])
  })

  test("true: an authorization server that offers it binds the tokens", T, async (t) => {
    const server = await oauthServer(t, { confidential: true, dpop: {} })
    const inv = await listMcpTools(await agentEntry(server, { dpop: true }), { oauth: { tokenStore: memoryStore() } })
    assert.deepEqual(inv.status, { agent: "connected" }, inv.servers.agent?.error)
    assert.deepEqual(schemes(server), ["DPoP"])
    assert.ok(server.log.dpop.length > 0 && server.log.dpop.every((x) => x.error === null))
  })
})

describe("DPoP nonces", () => {
  test(
    "the authorization server's nonce: one retry, then the nonce at once on the next token request",
    T,
    async (t) => {
      const server = await oauthServer(t, { confidential: true, dpop: { nonce: "as-nonce-1" } })
      const source = await loadMcp(await agentEntry(server), { oauth: { tokenStore: memoryStore() } })
      t.after(() => source.close())
      assert.deepEqual(source.status, { agent: "connected" })
      assert.deepEqual(
        proofs(server, "token").map((x) => x.claims?.nonce),
        [undefined, "as-nonce-1"],
        "sent again once, with the nonce",
      )
      assert.equal(server.log.token.length, 2)

      // A new token in the same source: the nonce is known.
      server.expireAccessTokens()
      const result = await toolNamed(source, "agent_whoami").execute({})
      assert.equal(result.isError, false, result.output)
      assert.deepEqual(
        proofs(server, "token").map((x) => x.claims?.nonce),
        [undefined, "as-nonce-1", "as-nonce-1"],
      )
      assert.deepEqual(schemes(server), ["DPoP"])
    },
  )

  test("the MCP server's nonce: fetched with one ping, the request sent once more, then always sent", T, async (t) => {
    const server = await oauthServer(t, { confidential: true, dpop: { rsNonce: "rs-nonce-1" } })
    const source = await loadMcp(await agentEntry(server), { oauth: { tokenStore: memoryStore() } })
    t.after(() => source.close())
    assert.deepEqual(source.status, { agent: "connected" })
    const result = await toolNamed(source, "agent_whoami").execute({})
    assert.equal(result.isError, false, result.output)

    const withToken = server.log.mcp.filter((x) => x.scheme !== null)
    const refused = withToken.filter((x) => x.error === "use_dpop_nonce")
    const [first, ping] = refused
    assert.equal(refused.length, 2, JSON.stringify(withToken))
    assert.equal(ping!.method, "ping", "the nonce fetched with a ping")
    assert.equal(withToken.filter((x) => x.method === "ping").length, 1, "one ping")
    // The refused request, then the ping, then the same request again, accepted.
    assert.equal(withToken.indexOf(first!), 0)
    assert.equal(withToken[1], ping)
    assert.equal(withToken[2]!.method, first!.method)
    assert.ok(
      withToken.slice(2).every((x) => x.valid),
      JSON.stringify(withToken),
    )
    assert.ok(withToken.some((x) => x.method === "tools/call" && x.valid))
    const nonces = proofs(server, "mcp").map((x) => x.claims?.nonce)
    assert.deepEqual(nonces.slice(0, 2), [undefined, undefined])
    assert.ok(
      nonces.slice(2).every((x) => x === "rs-nonce-1"),
      JSON.stringify(nonces),
    )
    assert.ok(
      proofs(server, "token").every((x) => x.claims?.nonce === undefined),
      "the token endpoint asked for none",
    )
  })

  // The fixture serves its authorization server and its MCP endpoint on one origin, as
  // MCP servers with their own authorization server do. The two ask for nonces of their
  // own (RFC 9449 §8 and §9): one's nonce must not displace the other's, else every
  // token request after an MCP request (and every MCP request after a token request) is
  // refused once more for want of its nonce.
  test("both nonces on one origin: each retry happens once, even as tokens are issued again", T, async (t) => {
    const server = await oauthServer(t, { confidential: true, dpop: { nonce: "as-nonce-2", rsNonce: "rs-nonce-2" } })
    const source = await loadMcp(await agentEntry(server), { oauth: { tokenStore: memoryStore() } })
    t.after(() => source.close())
    assert.deepEqual(source.status, { agent: "connected" })
    server.expireAccessTokens()
    const result = await toolNamed(source, "agent_whoami").execute({})
    assert.equal(result.isError, false, result.output)

    const tokenRequests = proofs(server, "token").map((x) => x.claims?.nonce ?? null)
    const refusedAtMcp = server.log.mcp.filter((x) => x.error === "use_dpop_nonce").map((x) => x.method)
    assert.deepEqual(
      { tokenRequests, refusedAtMcp },
      {
        // The second token's request knows the authorization server's nonce already,
        tokenRequests: [null, "as-nonce-2", "as-nonce-2"],
        // and the MCP server's requests know its own: one refusal and one ping.
        refusedAtMcp: [refusedAtMcp[0], "ping"],
      },
    )
  })
})

describe("DPoP, the token type", () => {
  // The token request is made by rmcp for the authorization code and for client
  // credentials with a secret, by toolnexus itself for jwt-bearer: the refusal and its
  // reason must come out of each alike.
  const flows = [
    { flow: "the authorization code", options: {}, oauth: async () => ({}) },
    {
      flow: "client credentials with a secret",
      options: { confidential: true },
      oauth: async (server: Server) => (await agentEntry(server)).agent.oauth,
    },
    { flow: "jwt-bearer", options: {}, oauth: async () => ({ grantType: "jwt-bearer", assertion: "a.b.c" }) },
  ]
  for (const { flow, options, oauth } of flows) {
    test(`${flow}: a "Bearer" token_type where DPoP was asked for is refused, saying so`, T, async (t) => {
      const server = await oauthServer(t, { ...options, dpop: { tokenType: "Bearer" } })
      const inv = await listMcpTools(
        { docs: { url: server.url, oauth: await oauth(server) } },
        { oauth: { tokenStore: memoryStore(), onAuthorize: followToRedirect } },
      )
      assert.deepEqual(inv.status, { docs: "failed" })
      assert.deepEqual(
        server.log.token.map((x) => x.dpop),
        [true],
        "asked for once, with a proof",
      )
      assert.deepEqual(schemes(server), [], "the token was never used")
      const error = inv.servers.docs?.error ?? ""
      for (const secret of server.secrets) assert.ok(!error.includes(secret), "a secret in the reason")
      assert.match(error, /issued a "Bearer" token where a DPoP-bound one was asked for/)
    })
  }

  test('"dpop" in any case is a DPoP token', T, async (t) => {
    const server = await oauthServer(t, { confidential: true, dpop: { tokenType: "dpop" } })
    const inv = await listMcpTools(await agentEntry(server), { oauth: { tokenStore: memoryStore() } })
    assert.deepEqual(inv.status, { agent: "connected" }, inv.servers.agent?.error)
    assert.deepEqual(schemes(server), ["DPoP"])
  })
})

describe("DPoP, the key at rest", () => {
  test("the key is kept beside the tokens: another load uses the stored token and the same key", T, async (t) => {
    const server = await oauthServer(t, { confidential: true, dpop: {} })
    const tokenStore = memoryStore()
    const entry = await agentEntry(server)
    const first = await loadMcp(entry, { oauth: { tokenStore } })
    assert.deepEqual(first.status, { agent: "connected" })
    await first.close()
    const record = recordOf(tokenStore)
    assert.ok(record.dpopKey, "the record keeps the DPoP key")
    const [issued] = proofs(server, "token")
    assert.equal(storedKeyThumbprint(record.dpopKey), issued!.jkt)
    const seen = server.log.dpop.length

    const second = await loadMcp(entry, { oauth: { tokenStore } })
    t.after(() => second.close())
    assert.deepEqual(second.status, { agent: "connected" })
    const result = await toolNamed(second, "agent_whoami").execute({})
    assert.equal(result.isError, false, result.output)
    assert.equal(server.log.token.length, 1, "no new token request")
    const again = server.log.dpop.slice(seen)
    assert.ok(again.length > 0)
    assert.ok(
      again.every((x) => x.endpoint === "mcp" && x.error === null && x.jkt === issued!.jkt),
      JSON.stringify(again),
    )
    assert.equal(recordOf(tokenStore).dpopKey, record.dpopKey, "the same key kept")
  })
})

// The fixture's own checks, by hand, so that what the tests above see accepted means
// something: a proof by a key of ours, then each way of getting it wrong.
describe("the fixture's DPoP checks", () => {
  function signer() {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    const { kty, crv, x, y } = publicKey.export({ format: "jwk" })
    const jwk = { kty, crv, x, y }
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
    return {
      jkt: jwkThumbprint(jwk),
      proof(claims: Record<string, unknown>) {
        const now = Math.floor(Date.now() / 1000)
        const body = { jti: randomUUID(), htm: "POST", iat: now, ...claims }
        const input = `${part({ typ: "dpop+jwt", alg: "ES256", jwk })}.${part(body)}`
        const signature = sign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" })
        return `${input}.${signature.toString("base64url")}`
      },
    }
  }

  test("a bound token needs DPoP, a proof by its key, the token's hash and a fresh jti", T, async (t) => {
    const server = await oauthServer(t, { confidential: true, dpop: {} })
    const { agent } = await agentEntry(server)
    const key = signer()
    const issued = await fetch(`${server.base}/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        dpop: key.proof({ htu: `${server.base}/token` }),
      },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: agent.oauth.clientId,
        client_secret: agent.oauth.clientSecret,
      }),
    }).then((r) => r.json())
    assert.equal(issued.token_type, "DPoP")
    const token: string = issued.access_token
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
    const send = (authorization: string, dpop?: string) =>
      fetch(server.url, {
        method: "POST",
        headers: { authorization, "content-type": "application/json", ...(dpop && { dpop }) },
        body: ping,
      }).then((r) => r.status)
    const htu = server.url
    const ath = tokenHash(token)
    assert.equal(await send(`Bearer ${token}`), 401, "as a bearer token")
    assert.equal(await send(`DPoP ${token}`), 401, "without a proof")
    assert.equal(await send(`DPoP ${token}`, key.proof({ htu, ath: tokenHash("other") })), 401, "another ath")
    assert.equal(await send(`DPoP ${token}`, key.proof({ htu: `${htu}?x=1`, ath })), 401, "another htu")
    assert.equal(await send(`DPoP ${token}`, key.proof({ htu, ath, htm: "GET" })), 401, "another htm")
    assert.equal(await send(`DPoP ${token}`, signer().proof({ htu, ath })), 401, "another key")
    const good = key.proof({ htu, ath })
    assert.equal(await send(`DPoP ${token}`, good), 200, "the right proof")
    assert.equal(await send(`DPoP ${token}`, good), 401, "the same proof again")
    assert.deepEqual(
      server.log.dpop.map((x) => x.error),
      [
        null,
        "ath is not the token's hash",
        `htu ${htu}?x=1`,
        "htm GET",
        null, // the other key's proof is sound; the token is not its
        null,
        "jti replayed",
      ],
    )
    assert.ok(server.log.dpop.every((x, i) => i === 4 || x.jkt === key.jkt))
  })
})
