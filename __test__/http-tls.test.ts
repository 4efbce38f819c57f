// Remote servers over TLS: a certificate signed by the CA that NODE_EXTRA_CA_CERTS names is
// trusted next to the system's roots (as Node trusts it), HTTP/2 is negotiated where the
// server offers it, and a missing or unusable file never costs the other servers.
// The CA and the server's certificate are made at test time with the openssl CLI.
import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import { startStreamable } from "./fixtures/remote-streamable.mjs"
import { assertCleanExit, failureLines, linesWith, runNode, tempDir } from "./helpers.js"

const CALLS = 20

const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]

/** A fresh CA (ca.pem) and a certificate for 127.0.0.1 it signed (key, cert), in a temp dir. */
function makeCertificates(t: TestContext) {
  const dir = tempDir(t)
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=toolnexus test CA")
  openssl("req", ...ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1")
  fs.writeFileSync(
    path.join(dir, "leaf.ext"),
    "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
  )
  openssl(
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-set_serial",
    "2",
    "-days",
    "2",
    "-extfile",
    "leaf.ext",
    "-out",
    "leaf.pem",
  )
  const read = (name: string) => fs.readFileSync(path.join(dir, name), "utf8")
  return { dir, ca: path.join(dir, "ca.pem"), caPem: read("ca.pem"), key: read("leaf.key"), cert: read("leaf.pem") }
}

/**
 * Loads `config` in a fresh Node (NODE_EXTRA_CA_CERTS is read once per process), calls the
 * echo of every connected server CALLS times, and reports statuses and answers.
 */
async function runClient(config: object, extraCaCerts: string | undefined) {
  const env: NodeJS.ProcessEnv = { ...process.env, CONFIG: JSON.stringify(config) }
  delete env.NODE_EXTRA_CA_CERTS
  if (extraCaCerts !== undefined) env.NODE_EXTRA_CA_CERTS = extraCaCerts
  const run = await runNode(
    `import { loadMcp } from "toolnexus"
     const mcp = await loadMcp(JSON.parse(process.env.CONFIG))
     const answers = {}
     for (const tool of mcp.tools.filter((t) => t.name.endsWith("_echo"))) {
       for (let i = 0; i < ${CALLS}; i++) answers[tool.name] = await tool.execute({ text: "over TLS" })
     }
     console.log(JSON.stringify({ status: mcp.status, answers }))
     await mcp.close()`,
    { env, timeout: 60_000 },
  )
  assertCleanExit(run)
  const { status, answers } = JSON.parse(run.stdout) as {
    status: Record<string, string>
    answers: Record<string, { isError: boolean; output: string }>
  }
  return { status, answers, stderr: run.stderr }
}

/** Starts a stateful TLS fixture, counting the TCP connections it accepts. */
async function startTls(t: TestContext, certs: { key: string; cert: string }, http2 = false) {
  const srv = await startStreamable({ stateful: true, tls: { key: certs.key, cert: certs.cert, http2 } })
  t.after(() => srv.close())
  let connections = 0
  srv.httpServer.on("connection", () => connections++)
  return { srv, connections: () => connections }
}

const assertEchoed = (answer: { isError: boolean; output: string } | undefined) => {
  assert.ok(answer, "no echo answered")
  assert.equal(answer.isError, false, answer.output)
  assert.deepEqual(JSON.parse(answer.output), { text: "over TLS" })
}

describe("TLS and NODE_EXTRA_CA_CERTS", { timeout: 120_000 }, () => {
  test("a server whose CA NODE_EXTRA_CA_CERTS names is trusted, and its connections reused", async (t) => {
    const certs = makeCertificates(t)
    const { srv, connections } = await startTls(t, certs)
    const { status, answers } = await runClient({ tls: { url: srv.url } }, certs.ca)
    assert.deepEqual(status, { tls: "connected" })
    assertEchoed(answers.tls_echo)
    assert.ok(srv.log.every((e) => e.httpVersion === "1.1"))
    assert.ok(connections() <= 3, `${srv.log.length} requests opened ${connections()} TLS connections`)
  })

  test("without the variable the server fails with a certificate reason naming it", async (t) => {
    const certs = makeCertificates(t)
    const { srv } = await startTls(t, certs)
    const { status, stderr } = await runClient({ tls: { url: srv.url } }, undefined)
    assert.deepEqual(status, { tls: "failed" })
    const [line, ...more] = failureLines(stderr, "tls")
    assert.equal(more.length, 0, stderr)
    assert.match(line ?? "", /certificate/i, stderr)
  })

  test("a self-signed certificate that is not a CA's, itself named in NODE_EXTRA_CA_CERTS, is trusted", async (t) => {
    const dir = tempDir(t)
    const names = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    const leaf = ["-addext", "basicConstraints=critical,CA:FALSE"]
    const args = ["req", "-x509", ...ec, "-keyout", "key.pem", "-out", "cert.pem", "-days", "2", ...names, ...leaf]
    execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
    const read = (name: string) => fs.readFileSync(path.join(dir, name), "utf8")
    const { srv } = await startTls(t, { key: read("key.pem"), cert: read("cert.pem") })
    const { status, answers } = await runClient({ tls: { url: srv.url } }, path.join(dir, "cert.pem"))
    assert.deepEqual(status, { tls: "connected" })
    assertEchoed(answers.tls_echo)
  })

  /** A self-signed certificate of openssl's default kind, a CA's (basicConstraints CA:TRUE). */
  function selfSignedCa(t: TestContext, name: string, validity: string[] = ["-days", "2"]) {
    const dir = tempDir(t)
    const subject = ["-subj", `/CN=${name}`, "-addext", `subjectAltName=IP:${name}`]
    const args = ["req", "-x509", ...ec, "-keyout", "key.pem", "-out", "cert.pem", ...validity, ...subject]
    execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
    const text = execFileSync("openssl", ["x509", "-in", "cert.pem", "-noout", "-text"], { cwd: dir }).toString()
    assert.match(text, /CA:TRUE/, "openssl made a CA's certificate")
    const read = (file: string) => fs.readFileSync(path.join(dir, file), "utf8")
    return { key: read("key.pem"), cert: read("cert.pem"), path: path.join(dir, "cert.pem") }
  }

  test("a self-signed CA's certificate named in NODE_EXTRA_CA_CERTS is trusted as the server's own, as Node trusts it", async (t) => {
    const own = selfSignedCa(t, "127.0.0.1")
    const { srv } = await startTls(t, own)
    const { status, answers } = await runClient({ tls: { url: srv.url } }, own.path)
    assert.deepEqual(status, { tls: "connected" })
    assertEchoed(answers.tls_echo)
  })

  test("a trusted self-signed CA's certificate is still refused for another name", async (t) => {
    const other = selfSignedCa(t, "127.0.0.2")
    const { srv } = await startTls(t, other)
    const { status, stderr } = await runClient({ tls: { url: srv.url } }, other.path)
    assert.deepEqual(status, { tls: "failed" })
    assert.match(failureLines(stderr, "tls")[0] ?? "", /invalid peer certificate/, stderr)
  })

  test("HTTP/2 is negotiated over TLS where the server offers it, on one connection", async (t) => {
    const certs = makeCertificates(t)
    const { srv, connections } = await startTls(t, certs, true)
    const { status, answers } = await runClient({ h2: { url: srv.url } }, certs.ca)
    assert.deepEqual(status, { h2: "connected" })
    assertEchoed(answers.h2_echo)
    const versions = new Set(srv.log.map((e) => e.httpVersion))
    assert.deepEqual([...versions], ["2.0"])
    assert.equal(connections(), 1, `${srv.log.length} requests opened ${connections()} connections`)
  })

  test("a missing file leaves the system's roots, silently: the TLS server fails, a plain one connects", async (t) => {
    const certs = makeCertificates(t)
    const { srv } = await startTls(t, certs)
    const plain = await startStreamable({ stateful: true })
    t.after(() => plain.close())
    const missing = path.join(certs.dir, "no-such-file.pem")
    const { status, answers, stderr } = await runClient({ tls: { url: srv.url }, plain: { url: plain.url } }, missing)
    assert.deepEqual(status, { tls: "failed", plain: "connected" })
    assertEchoed(answers.plain_echo)
    assert.match(failureLines(stderr, "tls")[0] ?? "", /certificate/i, stderr)
    assert.equal(linesWith(stderr, "[toolnexus]").length, 1, stderr)
  })

  test("a block that is no certificate is skipped: the CA after it is still trusted", async (t) => {
    const certs = makeCertificates(t)
    const { srv } = await startTls(t, certs)
    const plain = await startStreamable({ stateful: true })
    t.after(() => plain.close())
    const bundle = path.join(certs.dir, "bundle.pem")
    fs.writeFileSync(bundle, `-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n${certs.caPem}`)
    const { status, answers, stderr } = await runClient({ tls: { url: srv.url }, plain: { url: plain.url } }, bundle)
    assert.deepEqual(status, { tls: "connected", plain: "connected" })
    assertEchoed(answers.tls_echo)
    assertEchoed(answers.plain_echo)
    assert.deepEqual(linesWith(stderr, "[toolnexus]"), [])
  })
})
