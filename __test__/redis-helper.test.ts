// The Redis test helper itself (redis.ts), against real redis-server processes: what the
// shared-state tests read through it must be what Redis holds, and no server it starts
// may outlive its test. Needs a redis-server (scripts/ensure-redis.sh), not the addon.
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import { describe, it } from "node:test"
import { fileURLToPath } from "node:url"

import { childPids, isAlive } from "./liveness.js"
import { encode, exchange, parse, RedisError, sendCommand, startRedis } from "./redis.js"

/** Polls `check` until it holds or `ms` pass (helpers.ts has one too, but loads the addon). */
async function poll(check: () => boolean, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 25))) {
    if (Date.now() > deadline) return false
  }
  return true
}

/** The folder redis-server runs in (its cwd, which is its --dir). */
const cwdOf = (pid: number) => fs.readlinkSync(`/proc/${pid}/cwd`)
const linux = process.platform === "linux"

describe("RESP2", () => {
  it("encodes a command as an array of bulk strings, byte lengths and all", () => {
    assert.equal(encode(["SET", "k", "é\r\n"]).toString(), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\né\r\n\r\n")
  })

  it("parses every reply type, nested, and waits for the rest of a split one", () => {
    const wire = Buffer.from("*6\r\n+OK\r\n-ERR no\r\n:42\r\n$5\r\na\r\nbc\r\n$-1\r\n*2\r\n*-1\r\n*0\r\n")
    for (let cut = 0; cut < wire.length; cut++) assert.equal(parse(wire.subarray(0, cut)), undefined, `cut at ${cut}`)
    const reply = parse(wire)!
    assert.equal(reply.next, wire.length)
    const [ok, error, int, bulk, nil, nested] = reply.value as unknown[]
    assert.deepEqual([ok, int, bulk, nil, nested], ["OK", 42, "a\r\nbc", null, [null, []]])
    assert.ok(error instanceof RedisError && error.message === "ERR no")
  })
})

describe("startRedis", () => {
  it("SET and GET round-trip; an error reply rejects", async (t) => {
    const redis = await startRedis(t)
    assert.match(redis.url, /^redis:\/\/127\.0\.0\.1:\d+$/)
    assert.equal(redis.url, `redis://127.0.0.1:${redis.port}`)
    assert.equal(await redis.command("SET", "greeting", "héllo\r\nworld"), "OK")
    assert.equal(await redis.command("GET", "greeting"), "héllo\r\nworld")
    assert.equal(await redis.command("GET", "missing"), null)
    assert.equal(await redis.command("INCR", "n"), 1)
    await assert.rejects(redis.command("INCR", "greeting"), (e) => e instanceof RedisError && /ERR/.test(e.message))
    // Commands on one connection, replies in order.
    assert.deepEqual(
      await exchange(redis.url, [
        ["RPUSH", "l", "a", "b"],
        ["LRANGE", "l", "0", "-1"],
      ]),
      [2, ["a", "b"]],
    )
    if (linux) assert.ok(cwdOf(redis.pid).startsWith(fs.realpathSync(os.tmpdir())), "runs in a temp folder")
  })

  it("keys() scans with a pattern; dump() holds every string key and only those", async (t) => {
    const redis = await startRedis(t)
    assert.deepEqual(await redis.keys(), [])
    assert.deepEqual(await redis.dump(), new Map())
    // More than one SCAN batch's worth, so the cursor loop runs.
    for (let i = 0; i < 1_500; i += 500) {
      const args = Array.from({ length: 500 }, (_, j) => [`fleet:${i + j}`, String(i + j)]).flat()
      await redis.command("MSET", ...args)
    }
    await redis.command("HSET", "fleet:hash", "f", "v")
    await redis.command("SADD", "other:set", "m")
    await redis.command("SET", "other:string", "s")
    const fleet = await redis.keys("fleet:*")
    assert.equal(fleet.length, 1_501)
    assert.deepEqual(fleet, [...fleet].sort())
    assert.deepEqual(await redis.keys("other:*"), ["other:set", "other:string"])
    const dump = await redis.dump()
    assert.equal(dump.size, 1_501)
    assert.equal(dump.get("fleet:1499"), "1499")
    assert.equal(dump.get("other:string"), "s")
    assert.equal(dump.has("fleet:hash"), false)
    assert.equal(dump.has("other:set"), false)
  })

  it("restart() comes back empty on the same port, as a new process", async (t) => {
    const redis = await startRedis(t)
    const { port, pid } = redis
    await redis.command("SET", "k", "v")
    await redis.restart()
    assert.equal(redis.port, port)
    assert.notEqual(redis.pid, pid)
    assert.equal(isAlive(pid), false, "the first server is gone")
    assert.deepEqual(await redis.keys(), [])
    assert.equal(await redis.command("PING"), "PONG")
  })

  it("stop() leaves no process and no folder; a second stop is a no-op", async (t) => {
    const redis = await startRedis(t)
    const pid = redis.pid
    const dir = linux ? cwdOf(pid) : undefined
    assert.ok(childPids().includes(pid))
    await redis.stop()
    assert.equal(isAlive(pid), false)
    assert.equal(childPids().includes(pid), false)
    if (dir) assert.equal(fs.existsSync(dir), false, `${dir} is left`)
    await assert.rejects(redis.command("PING"), /ECONNREFUSED|closed/)
    await redis.stop()
  })

  it("a test's server is stopped when that test ends", async (t) => {
    let pid = 0
    await t.test("inner", async (inner) => {
      pid = (await startRedis(inner)).pid
      assert.equal(isAlive(pid), true)
    })
    assert.ok(pid > 0)
    assert.equal(isAlive(pid), false)
  })

  it("servers started at once get ports of their own", async (t) => {
    const fleet = await Promise.all([startRedis(t), startRedis(t), startRedis(t)])
    assert.equal(new Set(fleet.map((r) => r.port)).size, 3)
    await Promise.all(fleet.map((r, i) => r.command("SET", "who", String(i))))
    assert.deepEqual(await Promise.all(fleet.map((r) => r.command("GET", "who"))), ["0", "1", "2"])
  })

  it("with a password: refuses a command without it, takes it through the url or AUTH", async (t) => {
    const redis = await startRedis(t, { password: "s3cret/pw" })
    const bare = `redis://127.0.0.1:${redis.port}`
    assert.equal(redis.url, `redis://:s3cret%2Fpw@127.0.0.1:${redis.port}`)
    await assert.rejects(
      sendCommand(bare, "SET", "k", "v"),
      (e) => e instanceof RedisError && /^NOAUTH/.test(e.message),
    )
    await assert.rejects(sendCommand(`redis://:wrong@127.0.0.1:${redis.port}`, "PING"), /WRONGPASS|invalid password/)
    assert.equal(await sendCommand(redis.url, "SET", "k", "v"), "OK")
    assert.deepEqual(
      await exchange(bare, [
        ["AUTH", "s3cret/pw"],
        ["GET", "k"],
      ]),
      ["OK", "v"],
    )
    // The helper's own reads authenticate as the url does.
    assert.deepEqual(await redis.keys(), ["k"])
    await redis.restart()
    await assert.rejects(sendCommand(bare, "PING"), /NOAUTH/)
  })

  it("with an ACL user: only that user gets in, with keys, commands and channels", async (t) => {
    const redis = await startRedis(t, { aclUser: { name: "fleet", password: "pw" } })
    assert.equal(redis.url, `redis://fleet:pw@127.0.0.1:${redis.port}`)
    await assert.rejects(sendCommand(`redis://127.0.0.1:${redis.port}`, "PING"), /NOAUTH/)
    assert.equal(await redis.command("ACL", "WHOAMI"), "fleet")
    assert.equal(await redis.command("SET", "k", "v"), "OK")
    assert.equal(await redis.command("PUBLISH", "fleet:events", "hi"), 0)
  })

  it("a server left running neither keeps its process alive nor outlives it", async () => {
    const helper = fileURLToPath(new URL("redis.ts", import.meta.url))
    const script = `const { startRedis } = await import(${JSON.stringify(helper)})
      console.log((await startRedis()).pid)`
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d))
    const code = await new Promise((resolve) => child.on("exit", resolve))
    assert.equal(code, 0)
    const pid = Number(out.trim())
    assert.ok(pid > 0, `the child printed ${JSON.stringify(out)}`)
    assert.ok(await poll(() => !isAlive(pid), 2_000), `redis-server ${pid} outlived the process that started it`)
  })
})
