// `toolnexus auth <server> [mcp.json]` for the grants that ask no person and no browser
// (client credentials, an RFC 7523 jwt-bearer assertion from a file, an enterprise ID
// token exchanged at the IdP for an ID-JAG, and client credentials with DPoP-bound
// tokens), run as a child process against the OAuth fixture (fixtures/oauth-server.mjs):
// it signs in without printing an authorization URL, the one token request carries
// `resource`, the tokens land in the default store ($XDG_CONFIG_HOME/toolnexus/oauth/),
// and a following `toolnexus call` uses them without asking for another. An assertion
// the token endpoint refuses fails the command, naming the server and the error, never
// the assertion.
import assert from "node:assert/strict"
import { createPrivateKey, type JsonWebKey } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { test, type TestContext } from "node:test"
import { jwkThumbprint, startOAuthServer } from "./fixtures/oauth-server.mjs"
import { ROOT, runProcess, tempDir } from "./helpers.js"

const BIN = path.join(ROOT, "bin", "toolnexus.js")
const T = { timeout: 90_000 }
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

type Server = Awaited<ReturnType<typeof startOAuthServer>>
type Run = Awaited<ReturnType<typeof runProcess>>

/** A workload identity token as a platform issues one (its signature is not checked). */
function workloadJwt(subject: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
  const now = Math.floor(Date.now() / 1000)
  const claims = { iss: "https://k8s.example", sub: subject, aud: "toolnexus", iat: now, exp: now + 600 }
  return `${part({ alg: "RS256", typ: "JWT" })}.${part(claims)}.${Buffer.from(`sig-${subject}`).toString("base64url")}`
}

/** A confidential client registered at the fixture, for the client-credentials grant. */
async function registeredClient(server: Server) {
  const registered = await fetch(`${server.base}/register`, { method: "POST", body: "{}" }).then((r) => r.json())
  assert.ok(registered.client_secret, "the fixture registered a confidential client")
  return { clientId: registered.client_id as string, clientSecret: registered.client_secret as string }
}

/**
 * The fixture bent by `options`, a config file in a temp folder whose one server "docs"
 * is `entry(server, dir)`, and the CLI run with its own token store.
 */
async function setup(
  t: TestContext,
  options: Parameters<typeof startOAuthServer>[0],
  entry: (server: Server, dir: string) => object | Promise<object>,
) {
  const server = await startOAuthServer(options)
  t.after(() => server.close())
  const dir = tempDir(t)
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(dir, "config") }
  const storeDir = path.join(dir, "config", "toolnexus", "oauth")
  const config = path.join(dir, "mcp.json")
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { docs: await entry(server, dir) } }))
  // From the package root, not the config's folder.
  const bin = (...args: string[]) => runProcess([BIN, ...args], { env, timeout: 30_000 })
  /** The records in the store, parsed. */
  const records = () =>
    (fs.existsSync(storeDir) ? fs.readdirSync(storeDir) : []).map(
      (name) =>
        JSON.parse(fs.readFileSync(path.join(storeDir, name), "utf8")) as {
          dpopKey?: string
          credentials?: { token_response?: { access_token?: string; token_type?: string } }
        },
    )
  return { server, dir, config, bin, records }
}

const shown = (run: Run) =>
  `code ${run.code}${run.timedOut ? " (timed out)" : ""}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`

/** Asserts that nothing the fixture holds secret (secrets, assertions, tokens) was printed. */
function assertNoSecrets(server: Server, ...runs: Run[]) {
  for (const run of runs) {
    for (const secret of server.secrets) {
      if (!secret) continue
      assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), `a secret was printed\n${shown(run)}`)
    }
  }
}

/** `toolnexus auth docs` signed in with no person: exit 0, no URL, nothing registered or authorized. */
async function signIn(bin: (...args: string[]) => Promise<Run>, config: string, server: Server) {
  const auth = await bin("auth", "docs", config)
  assert.equal(auth.code, 0, shown(auth))
  assert.match(auth.stdout, /^signed in to "docs"$/m)
  assert.doesNotMatch(auth.stdout, /Sign in to|http/, "no authorization URL was printed")
  assert.deepEqual(server.log.authorize, [], "no authorization request")
  return auth
}

/**
 * `toolnexus call docs whoami` after the sign-in: it answers with the granted scope, using
 * the stored token (the fixture's MCP endpoint takes only tokens it issued), and asks the
 * token endpoint for nothing.
 */
async function callWithStoredToken(bin: (...args: string[]) => Promise<Run>, config: string, server: Server) {
  const tokenRequests = server.log.token.length
  const idpRequests = server.log.idp.length
  const mcpBefore = server.log.mcp.length
  const call = await bin("call", "docs", "whoami", "--config", config)
  assert.equal(call.code, 0, shown(call))
  assert.equal(call.stdout.trim(), "read")
  assert.equal(server.log.token.length, tokenRequests, "no new token request")
  assert.equal(server.log.idp.length, idpRequests, "no new request to the IdP")
  const sent = server.log.mcp.slice(mcpBefore)
  assert.ok(
    sent.some((x) => x.method === "tools/call" && x.valid),
    JSON.stringify(sent),
  )
  assert.ok(
    sent.every((x) => x.valid),
    `the stored token was refused: ${JSON.stringify(sent)}`,
  )
  return { call, sent }
}

test("client_credentials: signed in with the client's secret; call uses the stored token", T, async (t) => {
  let client = { clientId: "", clientSecret: "" }
  const { server, config, bin, records } = await setup(t, { confidential: true, requireResource: true }, async (s) => {
    client = await registeredClient(s)
    return { url: s.url, oauth: { grantType: "client_credentials", ...client, scopes: ["read"] } }
  })
  const auth = await signIn(bin, config, server)
  assert.deepEqual(
    server.log.token.map((x) => [x.grant, x.resource, x.scope]),
    [["client_credentials", server.url, "read"]],
  )
  assert.equal(server.log.register.length, 1, "only the test's own registration")
  const [record, ...more] = records()
  assert.equal(more.length, 0, "one record in the store")
  assert.ok(record?.credentials?.token_response?.access_token, "the access token is kept")

  const { call } = await callWithStoredToken(bin, config, server)
  assertNoSecrets(server, auth, call)
  for (const run of [auth, call]) assert.ok(!(run.stdout + run.stderr).includes(client.clientSecret))
})

test("jwt-bearer: the assertion read from { file }, sent with resource; call uses the stored token", T, async (t) => {
  const assertion = workloadJwt("cli")
  const { server, config, bin } = await setup(t, { requireResource: true }, (s, dir) => {
    const file = path.join(dir, "token.jwt")
    fs.writeFileSync(file, `${assertion}\n`)
    return { url: s.url, oauth: { grantType: "jwt-bearer", assertion: { file }, scopes: ["read"] } }
  })
  const auth = await signIn(bin, config, server)
  assert.deepEqual(
    server.log.token.map((x) => [x.grant, x.assertion, x.resource]),
    [[JWT_BEARER, assertion, server.url]],
  )
  assert.deepEqual(server.log.register, [], "no registration")

  const { call } = await callWithStoredToken(bin, config, server)
  assertNoSecrets(server, auth, call)
})

test(
  "jwt-bearer: a relative { file } is read from the config file's folder, not the working directory",
  T,
  async (t) => {
    const assertion = workloadJwt("relative")
    const { server, config, bin } = await setup(t, {}, (s, dir) => {
      fs.writeFileSync(path.join(dir, "token.jwt"), assertion)
      return { url: s.url, oauth: { grantType: "jwt-bearer", assertion: { file: "token.jwt" }, scopes: ["read"] } }
    })
    // The CLI runs from the package root; the config is elsewhere.
    assert.notEqual(path.dirname(config), ROOT)
    await signIn(bin, config, server)
    assert.deepEqual(
      server.log.token.map((x) => [x.grant, x.assertion]),
      [[JWT_BEARER, assertion]],
    )
  },
)

test("enterprise: the ID token exchanged at the IdP, the ID-JAG redeemed; call uses the stored token", T, async (t) => {
  const idToken = workloadJwt("person")
  const { server, config, bin } = await setup(t, { requireResource: true, idp: { clientId: "mcp-client" } }, (s) => ({
    url: s.url,
    oauth: {
      grantType: "enterprise",
      clientId: "mcp-client",
      scopes: ["read"],
      idp: { tokenEndpoint: `${s.base}/idp/token`, issuer: `${s.base}/idp`, clientId: "idp-client", idToken },
    },
  }))
  const auth = await signIn(bin, config, server)
  assert.deepEqual(
    server.log.idp.map((x) => [x.subject_token, x.client_id, x.audience, x.resource]),
    [[idToken, "idp-client", server.base, server.url]],
  )
  assert.deepEqual(
    server.log.token.map((x) => [x.grant, x.client_id, x.resource]),
    [[JWT_BEARER, "mcp-client", server.url]],
  )
  const jagHeader = JSON.parse(Buffer.from(server.log.token[0]!.assertion!.split(".")[0]!, "base64url").toString())
  assert.equal(jagHeader.typ, "oauth-id-jag+jwt", "the IdP's ID-JAG was redeemed")
  assert.deepEqual(server.log.register, [], "no registration")

  const { call } = await callWithStoredToken(bin, config, server)
  assertNoSecrets(server, auth, call)
})

test("DPoP offered: client_credentials tokens bound to a key kept in the record; call proves it", T, async (t) => {
  const { server, config, bin, records } = await setup(
    t,
    { confidential: true, requireResource: true, dpop: {} },
    async (s) => ({
      url: s.url,
      oauth: { grantType: "client_credentials", ...(await registeredClient(s)), scopes: ["read"] },
    }),
  )
  const auth = await signIn(bin, config, server)
  assert.deepEqual(
    server.log.token.map((x) => [x.grant, x.resource, x.dpop]),
    [["client_credentials", server.url, true]],
  )
  const atToken = server.log.dpop.filter((x) => x.endpoint === "token")
  assert.equal(atToken.length, 1)
  assert.equal(atToken[0]!.error, null, "the fixture accepted the proof")
  const jkt = atToken[0]!.jkt

  const [record, ...more] = records()
  assert.equal(more.length, 0, "one record in the store")
  assert.match(record?.credentials?.token_response?.token_type ?? "", /^dpop$/i)
  assert.ok(record?.dpopKey, "the record keeps the DPoP key")
  const key = createPrivateKey({ key: Buffer.from(record.dpopKey, "base64"), format: "der", type: "pkcs8" })
  assert.equal(jwkThumbprint(key.export({ format: "jwk" }) as JsonWebKey), jkt, "the key the token is bound to")

  // The call, in a process of its own, proves possession with the stored key.
  const proofsBefore = server.log.dpop.length
  const { call, sent } = await callWithStoredToken(bin, config, server)
  assert.deepEqual([...new Set(sent.map((x) => x.scheme).filter((x) => x !== null))], ["DPoP"])
  const proofs = server.log.dpop.slice(proofsBefore)
  assert.ok(proofs.length > 0)
  assert.ok(
    proofs.every((x) => x.endpoint === "mcp" && x.error === null && x.jkt === jkt),
    JSON.stringify(proofs),
  )
  assertNoSecrets(server, auth, call)
  assert.ok(!(auth.stdout + auth.stderr + call.stdout + call.stderr).includes(record.dpopKey), "the key was printed")
})

test(
  "jwt-bearer refused with invalid_grant: exits non-zero naming the server and the error, not the assertion",
  T,
  async (t) => {
    const assertion = workloadJwt("refused")
    const { server, config, bin, records } = await setup(t, { jwtBearerError: "invalid_grant" }, (s, dir) => {
      const file = path.join(dir, "token.jwt")
      fs.writeFileSync(file, assertion)
      return { url: s.url, oauth: { grantType: "jwt-bearer", assertion: { file } } }
    })
    const auth = await bin("auth", "docs", config)
    assert.equal(auth.timedOut, false, shown(auth))
    assert.notEqual(auth.code, 0, shown(auth))
    assert.ok(
      (auth.stdout + auth.stderr).split("\n").some((line) => line.includes('"docs"') && line.includes("invalid_grant")),
      `no line names "docs" and invalid_grant\n${shown(auth)}`,
    )
    assert.doesNotMatch(auth.stdout, /^signed in/m)
    assert.doesNotMatch(auth.stdout, /Sign in to/, "no fallback to a browser sign-in")
    assert.ok(!auth.stdout.includes(assertion) && !auth.stderr.includes(assertion), "the assertion was printed")
    assert.deepEqual(
      server.log.token.map((x) => x.grant),
      [JWT_BEARER],
      "exactly one token request",
    )
    assert.deepEqual(server.log.register, [])
    assert.deepEqual(server.log.authorize, [])
    // The authorization server's metadata may be kept; no token is.
    assert.deepEqual(
      records().filter((x) => x.credentials !== undefined && x.credentials !== null),
      [],
      "no tokens stored",
    )
  },
)
