// `toolnexus auth <server> [config]` against the test authorization server: it prints
// the authorization URL, the "browser" (a fetch that follows redirects) comes back to the
// loopback listener, the tokens land in the default store; `toolnexus list` then shows
// the server connected, and after `auth --logout` as needing authorization.
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { test } from "node:test"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"
import { NODE, ROOT, runProcess, tempDir } from "./helpers.js"

const BIN = path.join(ROOT, "bin", "toolnexus.js")

test(
  "toolnexus auth signs in through the loopback listener; list and --logout follow",
  { timeout: 60_000 },
  async (t) => {
    const server = await startOAuthServer()
    t.after(() => server.close())
    const dir = tempDir(t)
    const env = { ...process.env, XDG_CONFIG_HOME: path.join(dir, "config") }
    const config = path.join(dir, "mcp.json")
    fs.writeFileSync(config, JSON.stringify({ docs: { url: server.url } }))
    const bin = (...args: string[]) => runProcess([BIN, ...args], { env, timeout: 20_000 })

    const before = await bin("list", config)
    assert.equal(before.code, 1)
    assert.match(before.stdout, /^docs: needs authorization \(run: toolnexus auth docs\)$/m, before.stdout)

    const child = spawn(NODE, [BIN, "auth", "docs", config], { env, stdio: ["ignore", "pipe", "pipe"] })
    t.after(() => child.kill())
    let stdout = ""
    child.stderr.resume()
    const url = await new Promise<string>((resolve) => {
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk
        const found = /^ {2}(http\S+)$/m.exec(stdout)
        if (found) resolve(found[1]!)
      })
    })
    const page = await fetch(url)
    assert.match(await page.text(), /Signed in/)
    const code = await new Promise((resolve) => child.on("exit", resolve))
    assert.equal(code, 0, stdout)
    assert.match(stdout, /^signed in to "docs"$/m)
    assert.equal(server.log.authorize.length, 1)

    const after = await bin("list", config)
    assert.equal(after.code, 0, after.stdout + after.stderr)
    assert.match(after.stdout, /^docs: connected \(1 tools/m)

    const logout = await bin("auth", "--logout", "docs", config)
    assert.equal(logout.code, 0, logout.stderr)
    assert.equal(fs.readdirSync(path.join(dir, "config", "toolnexus", "oauth")).length, 0)
    const gone = await bin("list", config)
    assert.match(gone.stdout, /^docs: needs authorization/m)

    const unknown = await bin("auth", "nope", config)
    assert.equal(unknown.code, 2)
  },
)
