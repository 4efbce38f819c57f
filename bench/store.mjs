// Store mode listing speed: `listTools()` from the cache of a store with 10 servers of
// 50 tools each (500 tools), and `listToolsAsync()` with nothing initializing. Then what a
// change costs, with two agents of one server each listening: the first `listTools()` of
// the store view and of an agent view after a change that only a third agent can see, and
// the time from that change to the store view's onChange listener. Then, with the reference
// server, `echo` calls through a store tool handle: one at a time (latency) and 64 in
// flight (calls per second), with the client's CPU time and voluntary context switches
// per call (process.resourceUsage, every thread).
//
//   node bench/store.mjs [--servers 10] [--tools 50] [--calls 20000] [--changes 300]
//                        [--tool-calls 3000] [--json out.json]
//
// Servers are the Rust reference server (target/release/toolnexus-refserver, built by
// `cargo build --release -p toolnexus-refserver`) or, without it, the Node fixture server
// of the test suite. Each call is timed on its own with process.hrtime.bigint(); the
// figures are the median and the 99th percentile per call, after a warm-up.
import { existsSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { refserverPath, repoRoot, serverCommand } from "./lib/refserver.mjs"
import { formatNumber, median, quantile, sorted } from "./lib/stats.mjs"

const { values: flags } = parseArgs({
  options: {
    servers: { type: "string", default: "10" },
    tools: { type: "string", default: "50" },
    calls: { type: "string", default: "20000" },
    changes: { type: "string", default: "300" },
    "tool-calls": { type: "string", default: "3000" },
    json: { type: "string" },
  },
})
// TOOLNEXUS_BENCH_PACKAGE: another build of the package to measure, as for run.mjs.
const packageDir = process.env.TOOLNEXUS_BENCH_PACKAGE ?? repoRoot
const { createMcpStore } = await import(pathToFileURL(path.join(packageDir, "js/store.js")).href)

const SERVERS = Number(flags.servers)
const TOOLS = Number(flags.tools)
const CALLS = Number(flags.calls)
const CHANGES = Number(flags.changes)
const TOOL_CALLS = Number(flags["tool-calls"])
const IN_FLIGHT = 64
const AGENTS = ["a0", "a1"]
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
      inputSchema: {
        type: "object",
        properties: { query: { type: "string" }, limit: { type: "number" } },
        required: ["query"],
      },
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

/** CPU µs and voluntary switches per call of `calls` calls made by `run()`, and its ms. */
async function usagePerCall(calls, run) {
  const before = process.resourceUsage()
  const t0 = performance.now()
  await run()
  const ms = performance.now() - t0
  const after = process.resourceUsage()
  const cpuUs = after.userCPUTime + after.systemCPUTime - before.userCPUTime - before.systemCPUTime
  return {
    ms,
    cpuUs: cpuUs / calls,
    switches: (after.voluntaryContextSwitches - before.voluntaryContextSwitches) / calls,
  }
}

/** `echo` through a store tool handle: sequential latency, then 64 in flight. */
async function toolCalls(echo) {
  const call = async () => {
    const result = await echo.execute({ text: "hello world" })
    if (result.isError) throw new Error(result.output)
  }
  const inFlight = async (total) => {
    let next = 0
    const worker = async () => {
      while (next++ < total) await call()
    }
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  }
  await timeAsync(call, 500)
  let times
  const sequential = await usagePerCall(TOOL_CALLS, async () => (times = await timeAsync(call, TOOL_CALLS)))
  await inFlight(2_000)
  const concurrent = await usagePerCall(TOOL_CALLS * 5, () => inFlight(TOOL_CALLS * 5))
  return {
    sequential: { ...figures(times), cpuUs: sequential.cpuUs, switches: sequential.switches },
    inFlight: {
      callsPerSecond: (TOOL_CALLS * 5 * 1000) / concurrent.ms,
      cpuUs: concurrent.cpuUs,
      switches: concurrent.switches,
    },
  }
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
  // On a busy machine ten servers can take longer than one bounded wait.
  while (store.isInitializing()) await store.waitReady()
  const listed = store.listTools()
  const readyMs = performance.now() - t0
  const states = Object.values(store.status()).map((s) => s.state)
  if (listed.length !== SERVERS * TOOLS || states.some((s) => s !== "connected")) {
    throw new Error(
      `expected ${SERVERS * TOOLS} tools from ${SERVERS} connected servers, got ${listed.length} (${states})`,
    )
  }
  if (store.isInitializing()) throw new Error("a server is still initializing")

  const version = store.version
  const echo = kind === "toolnexus-refserver" ? store.tools().find((t) => t.name === "server0_echo") : undefined

  // Warm up the JIT, then measure.
  timeSync(() => store.listTools(), 2_000)
  const sync = figures(timeSync(() => store.listTools(), CALLS))
  await timeAsync(() => store.listToolsAsync(), 2_000)
  const asyncFig = figures(await timeAsync(() => store.listToolsAsync(), CALLS))
  if (store.version !== version) throw new Error("the store changed during the measurement; rerun")
  const calls = echo && (await toolCalls(echo))

  for (const agent of AGENTS) await store.forAgent(agent).addServers({ own: { command } }).listToolsAsync()
  // A change only agent "other" can see: one disabled server added, then removed.
  const other = store.forAgent("other")
  let flip = false
  const change = () => {
    flip = !flip
    if (flip) other.addServers({ idle: { command, disabled: true } })
    else other.removeServer("idle")
  }
  const agentView = store.forAgent(AGENTS[0])
  const storeRebuild = new Float64Array(CHANGES)
  const agentRebuild = new Float64Array(CHANGES)
  for (let i = 0; i < CHANGES; i++) {
    change()
    let t = process.hrtime.bigint()
    store.listTools()
    storeRebuild[i] = Number(process.hrtime.bigint() - t) / 1e3
    t = process.hrtime.bigint()
    agentView.listTools()
    agentRebuild[i] = Number(process.hrtime.bigint() - t) / 1e3
  }
  // From a change to the store view's listener, with every agent view listening too.
  for (const agent of AGENTS) store.forAgent(agent).onChange(() => {})
  let heard
  store.onChange(() => heard?.())
  const keepAlive = setInterval(() => {}, 1_000) // change listeners do not keep Node alive
  const notify = await timeAsync(async () => {
    const told = new Promise((resolve) => (heard = resolve))
    change()
    await told
  }, CHANGES)
  clearInterval(keepAlive)
  const afterChange = { storeView: figures(storeRebuild), agentView: figures(agentRebuild), onChange: figures(notify) }

  const us = (x) => `${formatNumber(x)} µs`
  const lines = [
    `store mode listing, ${SERVERS} servers × ${TOOLS} tools = ${listed.length} tools (${kind})`,
    `  createMcpStore returned in ${formatNumber(createMs)} ms; all connected after ${formatNumber(readyMs)} ms`,
    `  listTools()                          median ${us(sync.median)}   p99 ${us(sync.p99)}   min ${us(sync.min)}   (${CALLS} calls)`,
    `  listToolsAsync(), none initializing  median ${us(asyncFig.median)}   p99 ${us(asyncFig.p99)}   min ${us(asyncFig.min)}   (${CALLS} calls)`,
    `  target: listTools() median under ${TARGET_US} µs (MCPStore quotes 1 ms): ${sync.median < TARGET_US ? "met" : "NOT met"}`,
    `after a change only agent "other" sees (agents ${AGENTS.join(", ")} have ${TOOLS} tools each), ${CHANGES} changes:`,
    `  first store.listTools()              median ${us(afterChange.storeView.median)}   p99 ${us(afterChange.storeView.p99)}`,
    `  first forAgent("${AGENTS[0]}").listTools()     median ${us(afterChange.agentView.median)}   p99 ${us(afterChange.agentView.p99)}`,
    `  change to store onChange, ${AGENTS.length} agents listening  median ${us(afterChange.onChange.median)}   p99 ${us(afterChange.onChange.p99)}`,
  ]
  if (calls) {
    const { sequential: seq, inFlight } = calls
    const perCall = (f) => `CPU ${formatNumber(f.cpuUs)} µs, ${formatNumber(f.switches)} switches per call`
    lines.push(
      `echo through a store tool handle (client CPU and voluntary switches, every thread):`,
      `  one at a time   median ${us(seq.median)}   p99 ${us(seq.p99)}   ${perCall(seq)}   (${TOOL_CALLS} calls)`,
      `  ${IN_FLIGHT} in flight    ${formatNumber(inFlight.callsPerSecond)} calls/s   ${perCall(inFlight)}   (${TOOL_CALLS * 5} calls)`,
    )
  } else {
    lines.push("echo calls: skipped (they need toolnexus-refserver)")
  }
  console.log(lines.join("\n"))
  if (flags.json) {
    writeFileSync(
      flags.json,
      JSON.stringify(
        {
          servers: SERVERS,
          toolsPerServer: TOOLS,
          server: kind,
          createMs,
          readyMs,
          listTools: sync,
          listToolsAsync: asyncFig,
          afterChange,
          calls,
          unit: "µs",
        },
        null,
        2,
      ),
    )
  }
} finally {
  await store.close()
}
