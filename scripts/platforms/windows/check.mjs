// The Windows run: load, list, call, close() ends server and grandchild, and a host that
// kills itself takes the tree with it. Prints "windows run: ok" or throws.
import assert from "node:assert/strict"
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { loadMcp } from "../../../index.js"
import { alive, allGone, awkward, call, config } from "./common.mjs"

const started = Date.now()
const mcp = await loadMcp(config())
assert.deepEqual(mcp.status, { win: "connected" }, "the server connects")
assert.deepEqual(mcp.tools.map((t) => t.name).sort(), ["win_argv", "win_grandchild", "win_pid"])
// wine's cmd.exe drops the `%` of the standard library's `%%cd:~,%` escape, which
// Windows's keeps; nothing is run either way.
const argv = await call(mcp, "argv")
const expected = process.env.TOOLNEXUS_WINE ? awkward.map((arg) => arg.replaceAll("%", "")) : awkward
assert.deepEqual(argv, expected, "arguments reach the server as written, none run by cmd.exe")
const server = await call(mcp, "pid")
const grandchild = await call(mcp, "grandchild")
assert.ok(alive(server) && alive(grandchild), "server and grandchild run")
await mcp.close()
assert.ok(await allGone([server, grandchild]), "close() ends the server and its detached grandchild")
console.log(`close: ok (${Date.now() - started} ms from load)`)

const file = path.join(os.tmpdir(), `toolnexus-host-${process.pid}.json`)
const host = spawnSync(process.execPath, [path.join(import.meta.dirname, "host.mjs"), file], { stdio: "ignore" })
assert.notEqual(host.status, 0, "the host killed itself")
const pids = JSON.parse(fs.readFileSync(file, "utf8"))
fs.rmSync(file)
assert.ok(await allGone([pids.server, pids.grandchild]), "a killed host takes server and grandchild with it")
console.log("host kill: ok")
console.log("windows run: ok")
