// Store mode listing speed: `listTools()` from the cache of a store with 10 servers of
// 50 tools each (500 tools), and `listToolsAsync()` with nothing initializing.
//
//   node bench/store.mjs [--servers 10] [--tools 50] [--calls 20000] [--json out.json]
//
// Servers are the Rust reference server (target/release/toolnexus-refserver, built by
// `cargo build --release -p toolnexus-refserver`) or, without it, the Node fixture server
// of the test suite. Each call is timed on its own with process.hrtime.bigint(); the
// figures are the median and the 99th percentile per call, after a warm-up.
import { existsSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { createMcpStore } from "../js/store.js"
import { refserverPath, serverCommand } from "./lib/refserver.mjs"
import { formatNumber, median, quantile, sorted } from "./lib/stats.mjs"

const { values: flags } = parseArgs({
  options: {
    servers: { type: "string", default: "10" },
    tools: { type: "string", default: "50" },
    calls: { type: "string", default: "20000" },
    json: { type: "string" },
  },
})
const SERVERS = Number(flags.servers)
const TOOLS = Number(flags.tools)
const CALLS = Number(flags.calls)
const TARGET_US = 20

function serverEntry() {
  try {
    return { kind: "toolnexus-refserver", command: serverCommand(refserverPath(), { tools: TOOLS }) }
  } catch {
    const script = fileURLToPath(new URL("../__test__/fixtures/server.mjs", import.meta.url))
    if (!existsSync(script)) throw new Error("neither toolnexus-refserver nor the fixture server is available")
    const tools = Array.from({ length: TOOLS }, (_, i) => ({
      name: `tool_${i}`,
      description: `Synthetic tool number ${i}`,
      inputSchema: { type: "object", properties: { query: { type: "string" }, limit: { type: "number" } }, required: ["query"] },
    }))
    return { kind: "node fixture server", command: [process.execPath, script, `--tools=${JSON.stringify(tools)}`] }
  }
}

/** Per-call times in µs of `calls` synchronous calls of `fn`. */
function timeSync(fn, calls) {
  const out = new Float64Array(calls)
  for (let i = 0; i < calls; i++) {
    const t0 = process.hrtime.bigint()
    fn()
    out[i] = Number(process.hrtime.bigint() - t0) / 1e3
  }
  return out
}

/** Per-call times in µs of `calls` awaited calls of `fn`. */
async function timeAsync(fn, calls) {
  const out = new Float64Array(calls)
  for (let i = 0; i < calls; i++) {
    const t0 = process.hrtime.bigint()
    await fn()
    out[i] = Number(process.hrtime.bigint() - t0) / 1e3
  }
  return out
}

const figures = (samples) => {
  const s = sorted(samples)
  return { median: median(s), p99: quantile(s, 0.99), min: s[0] }
}

const { kind, command } = serverEntry()
const config = Object.fromEntries(Array.from({ length: SERVERS }, (_, i) => [`server${i}`, { command }]))

const t0 = performance.now()
const store = createMcpStore(config)
const createMs = performance.now() - t0
try {
  const listed = await store.listToolsAsync()
  const readyMs = performance.now() - t0
  const states = Object.values(store.status()).map((s) => s.state)
  if (listed.length !== SERVERS * TOOLS || states.some((s) => s !== "connected")) {
    throw new Error(`expected ${SERVERS * TOOLS} tools from ${SERVERS} connected servers, got ${listed.length} (${states})`)
  }
  if (store.isInitializing()) throw new Error("a server is still initializing")

  const version = store.version

  // Warm up the JIT, then measure.
  timeSync(() => store.listTools(), 2_000)
  const sync = figures(timeSync(() => store.listTools(), CALLS))
  await timeAsync(() => store.listToolsAsync(), 2_000)
  const asyncFig = figures(await timeAsync(() => store.listToolsAsync(), CALLS))
  if (store.version !== version) throw new Error("the store changed during the measurement; rerun")

  const us = (x) => `${formatNumber(x)} µs`
  const lines = [
    `store mode listing, ${SERVERS} servers × ${TOOLS} tools = ${listed.length} tools (${kind})`,
    `  createMcpStore returned in ${formatNumber(createMs)} ms; all connected after ${formatNumber(readyMs)} ms`,
    `  listTools()                          median ${us(sync.median)}   p99 ${us(sync.p99)}   min ${us(sync.min)}   (${CALLS} calls)`,
    `  listToolsAsync(), none initializing  median ${us(asyncFig.median)}   p99 ${us(asyncFig.p99)}   min ${us(asyncFig.min)}   (${CALLS} calls)`,
    `  target: listTools() median under ${TARGET_US} µs (MCPStore quotes 1 ms): ${sync.median < TARGET_US ? "met" : "NOT met"}`,
  ]
  console.log(lines.join("\n"))
  if (flags.json) {
    writeFileSync(
      flags.json,
      JSON.stringify({ servers: SERVERS, toolsPerServer: TOOLS, server: kind, createMs, readyMs, listTools: sync, listToolsAsync: asyncFig, unit: "µs" }, null, 2),
    )
  }
} finally {
  await store.close()
}
