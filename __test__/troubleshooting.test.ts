// The failure reasons of the README's troubleshooting table, each produced here through the
// public API: what a user reads when a server cannot come up, and what to do about it.
import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import http from "node:http"
import https from "node:https"
import net from "node:net"
import path from "node:path"
import { type TestContext, describe, test } from "node:test"
import { createMcpStore, listMcpTools } from "toolnexus"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"
import { assertCleanExit, failureLines, runNode, tempDir } from "./helpers.js"

const T = { timeout: 60_000 }

const errorOf = async (config: Record<string, unknown>, opts?: Parameters<typeof listMcpTools>[1]) => {
  const inv = await listMcpTools(config, opts)
  const [name] = Object.keys(config)
  assert.equal(inv.status[name!], "failed")
  return inv.servers[name!]?.error ?? ""
}

describe("troubleshooting: every reason says what to do", () => {
  test("the same reason through every door: listMcpTools, loadMcp's stderr line, a store's status", T, async (t) => {
    const config = {
      unset: { command: ["node", "${TN_TROUBLE_UNSET}"] },
      missing: { command: ["tn-no-such-program"] },
    }
    const inventory = await listMcpTools(config)
    const store = createMcpStore(config, { catalog: false })
    t.after(() => store.close())
    await store.listToolsAsync()
    const run = await runNode(
      `import { loadMcp } from "toolnexus"
       const mcp = await loadMcp(${JSON.stringify(config)})
       await mcp.close()`,
    )
    assertCleanExit(run)
    for (const name of Object.keys(config)) {
      const reason = inventory.servers[name]?.error
      assert.ok(reason, name)
      assert.deepEqual(failureLines(run.stderr, name), [`[toolnexus] MCP server "${name}" failed: ${reason}`])
      assert.equal(store.status()[name]?.lastError, reason, name)
    }
  })

  test("a variable that is not set", T, async () => {
    const error = await errorOf({ s: { command: ["node", "${TN_TROUBLE_UNSET}"] } })
    assert.equal(
      error,
      '"command[1]" uses ${TN_TROUBLE_UNSET}, which is not set and has no default: set TN_TROUBLE_UNSET in the environment, or write ${TN_TROUBLE_UNSET:-default}',
    )
  })

  test("a program on no folder of PATH: the PATH searched is named", T, async () => {
    const error = await errorOf({ s: { command: ["tn-no-such-program"] } })
    assert.equal(
      error,
      `cannot start "tn-no-such-program": No such file or directory (os error 2); it is in no folder of the PATH searched (${process.env.PATH}): give "command" its full path, or add its folder to PATH`,
    )
  })

  test("a PATH the entry's env sets is an env value, never shown", T, async () => {
    const secretPath = "/tn-secret-folder-9f3e"
    const error = await errorOf({ s: { command: ["tn-no-such-program"], env: { PATH: secretPath } } })
    assert.ok(!error.includes(secretPath), error)
    assert.match(error, /in no folder of the PATH the entry's "env" sets: give "command" its full path/)
  })

  test("a server that needs a sign-in nobody can give", T, async (t) => {
    const server = await startOAuthServer()
    t.after(() => server.close())
    const error = await errorOf({ docs: { url: server.url } }, { oauth: { tokenStore: memoryStore() } })
    assert.equal(error, "needs authorization: sign in with `toolnexus auth docs`, or give opts.oauth.onAuthorize")
  })

  test("a callbackPort another program holds", T, async (t) => {
    const server = await startOAuthServer()
    const holder = net.createServer()
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
    t.after(() => (holder.close(), server.close()))
    const port = (holder.address() as net.AddressInfo).port
    const error = await errorOf(
      { docs: { url: server.url, oauth: { callbackPort: port } } },
      { oauth: { tokenStore: memoryStore(), onAuthorize: async () => undefined } },
    )
    assert.equal(
      error,
      `cannot listen on 127.0.0.1:${port} for the sign-in redirect: Address already in use (os error 98): another program holds that port; stop it, or set "callbackPort" to a free one`,
    )
  })

  for (const [kind, constraints, problem, advice] of [
    [
      "a certificate nobody vouches for",
      "CA:FALSE",
      "UnknownIssuer",
      "; if the server's certificate is signed by a private CA, name that CA's PEM file in NODE_EXTRA_CA_CERTS",
    ],
    [
      "a CA's certificate as the server's own (openssl req -x509's default)",
      "CA:TRUE",
      "Other(OtherError(CaUsedAsEndEntity))",
      "; the server's certificate is a CA's (basicConstraints CA:TRUE), which is trusted only as itself: name that very certificate in NODE_EXTRA_CA_CERTS, or give the server one that is not a CA's (`-addext basicConstraints=critical,CA:FALSE` to `openssl req -x509`) and name it, or the CA that signed it, there",
    ],
  ] as const) {
    test(`${kind}: the host and the problem, and what to do`, T, async (t) => {
      const url = await selfSignedServer(t, constraints)
      const error = await errorOf({ tls: { url, protocol: "2025-11-25" } })
      assert.equal(
        error,
        `could not be reached: error sending request for url (${url}): client error (Connect): invalid peer certificate: ${problem}${advice}`,
      )
    })
  }

  for (const [status, word] of [
    [401, "unauthorized"],
    [403, "forbidden"],
  ] as const) {
    test(`credentials in "headers" the server refuses (HTTP ${status})`, T, async (t) => {
      const seen: Array<string | undefined> = []
      const server = http.createServer((req, res) => {
        seen.push(req.headers["x-api-key"] as string | undefined)
        res.writeHead(status).end()
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      t.after(() => server.close())
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/mcp`
      const error = await errorOf({ api: { url, headers: { "X-Api-Key": "tn-wrong-key" } } })
      assert.equal(error, `is ${word} (HTTP ${status}): check the credentials in its "headers"`)
      assert.ok(seen.includes("tn-wrong-key"), "the header was sent")
    })
  }
})

function memoryStore() {
  const values = new Map<string, string>()
  return {
    get: async (key: string) => values.get(key),
    set: async (key: string, value: string) => void values.set(key, value),
    delete: async (key: string) => void values.delete(key),
  }
}

/** An https server on loopback with a self-signed certificate of the given basicConstraints; its MCP URL. */
async function selfSignedServer(t: TestContext, constraints: string): Promise<string> {
  const dir = tempDir(t)
  const [key, cert] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")]
  const curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"]
  const names = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      ...curve,
      "-keyout",
      key,
      "-out",
      cert,
      ...names,
      "-addext",
      `basicConstraints=critical,${constraints}`,
    ],
    { stdio: "ignore" },
  )
  const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (_, res) =>
    res.writeHead(500).end(),
  )
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  t.after(() => server.close())
  return `https://127.0.0.1:${(server.address() as net.AddressInfo).port}/mcp`
}
