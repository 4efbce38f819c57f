// A fleet on a real redis-server (started here on a free loopback port):
// - a fresh instance of 50 servers x 100 tools listing every tool from the shared
//   catalog: the time from createMcpStore to a listTools() that has them all (its servers
//   lazy, its file catalog empty: every tool comes from Redis);
// - the call path with `state` set against it unset: sequential echo p50 through a store,
//   the same server, the two stores side by side in one run.
//
//   node bench/fleet.mjs [--rounds 5] [--servers 50] [--tools 100] [--calls 2000]
//
// Servers are the Rust reference server (cargo build --release -p toolnexus-refserver).
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import { parseArgs } from "node:util"
import { createMcpStore } from "../index.js"
import { refserverPath, serverCommand } from "./lib/refserver.mjs"
import { formatNumber, median, quantile, sorted } from "./lib/stats.mjs"

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    servers: { type: "string", default: "50" },
    tools: { type: "string", default: "100" },
    calls: { type: "string", default: "2000" },
  },
})
const [rounds, servers, tools, calls] = [flags.rounds, flags.servers, flags.tools, flags.calls].map(Number)
const print = (line) => process.stdout.write(`${line}\n`)
const temp = mkdtempSync(path.join(os.tmpdir(), "toolnexus-fleet-bench-"))

const port = await new Promise((resolve) => {
  const probe = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address()
    probe.close(() => resolve(port))
  })
})
const redis = spawn(
  "redis-server",
  ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--dir", temp],
  { stdio: "ignore" },
)
process.on("exit", () => redis.kill("SIGKILL"))
const url = `redis://127.0.0.1:${port}`
const command = serverCommand(refserverPath(), { tools })
const config = Object.fromEntries(Array.from({ length: servers }, (_, i) => [`s${i}`, { command, env: { N: `${i}` } }]))
const expected = servers * tools
const until = async (done, what, ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

// ---------------------------------------------------------------- the shared catalog
{
  const seeder = createMcpStore(config, { state: url, catalogDir: path.join(temp, "seeder") })
  await until(() => seeder.listTools().length === expected && seeder.sharedState().status === "connected", "the seeder")
  // Each live listing reaches Redis off the listing's path: a second instance proves it.
  const times = []
  for (let round = 0; round < rounds; round++) {
    const dir = path.join(temp, `fresh${round}`)
    const start = process.hrtime.bigint()
    const fresh = createMcpStore(config, { state: url, lazy: true, catalogDir: dir })
    // As a host waits: on onChange, not spinning on the JS thread (a core of two).
    await new Promise((resolve) => {
      const check = () => fresh.listTools().length === expected && (stop(), resolve())
      const stop = fresh.onChange(check)
      check()
    })
    times.push(Number(process.hrtime.bigint() - start))
    await fresh.close()
  }
  await seeder.close()
  const s = sorted(times)
  print(
    `fresh instance, ${servers} servers x ${tools} tools from Redis: every tool listed ${formatNumber(median(s) / 1e6)} ms after createMcpStore (median of ${rounds}; max ${formatNumber(s.at(-1) / 1e6)} ms)`,
  )
}

// ---------------------------------------------------------------- the call path
async function echoP50(state) {
  const store = createMcpStore({ one: { command: serverCommand(refserverPath(), {}) } }, { state, catalog: false })
  await store.waitReady()
  const echo = store.tools().find((t) => t.name === "one_echo")
  for (let i = 0; i < 200; i++) await echo.execute({ text: "warm" })
  const times = []
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint()
    await echo.execute({ text: "x" })
    times.push(Number(process.hrtime.bigint() - start))
  }
  await store.close()
  return times
}
const results = []
for (let pass = 0; pass < 2; pass++) {
  results.push({ state: "unset", times: await echoP50(undefined) })
  results.push({ state: "set", times: await echoP50(url) })
}
const p50 = (which) => median(results.filter((r) => r.state === which).flatMap((r) => r.times))
const p99 = (which) => quantile(sorted(results.filter((r) => r.state === which).flatMap((r) => r.times)), 0.99)
print(
  `sequential echo through a store, state unset: p50 ${formatNumber(p50("unset") / 1e3)} µs, p99 ${formatNumber(p99("unset") / 1e3)} µs; state set: p50 ${formatNumber(p50("set") / 1e3)} µs, p99 ${formatNumber(p99("set") / 1e3)} µs; set/unset ${(p50("set") / p50("unset")).toFixed(2)}x`,
)
redis.kill()
rmSync(temp, { recursive: true, force: true })
