// Sequential latency and what it costs the host: p50, p99, voluntary context switches
// (wake-ups, all threads) and CPU time per call, for toolnexus, the official v1 client and
// the plain-Node floor, on an idle machine, with the other CPUs kept busy, and pinned to
// one CPU. Each client runs in a process of its own, so the counts are its own.
//
//   node bench/wakeups.mjs [--calls 3000] [--rounds 3] [--modes idle,busy,pinned]
//                          [--clients toolnexus,v1,v2,floor] [--era 2025|2026]

import { spawn } from "node:child_process"
import os from "node:os"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { makeClient } from "./lib/clients.mjs"
import { refserverPath, serverCommand } from "./lib/refserver.mjs"
import { formatNumber, median, quantile, table } from "./lib/stats.mjs"

const { values: flags } = parseArgs({
  options: {
    calls: { type: "string", default: "3000" },
    rounds: { type: "string", default: "3" },
    modes: { type: "string", default: "idle,busy,pinned" },
    clients: { type: "string", default: "toolnexus,v1,floor" },
    era: { type: "string", default: "2025" },
    child: { type: "string" },
  },
})
const ECHO_ARGS = { text: "hello world" }
const self = fileURLToPath(import.meta.url)

/** In a child: one client's sequential calls, measured; prints one JSON line. */
async function measure(name, calls) {
  const client = await makeClient(name, flags.era)
  const session = await client.open([{ command: serverCommand(refserverPath()) }])
  const echo = session.caller(0, "echo")
  for (let i = 0; i < 500; i++) await echo(ECHO_ARGS)
  const times = new Float64Array(calls)
  const before = process.resourceUsage()
  const started = performance.now()
  for (let i = 0; i < calls; i++) {
    const start = performance.now()
    await echo(ECHO_ARGS)
    times[i] = performance.now() - start
  }
  const wall = performance.now() - started
  const after = process.resourceUsage()
  await session.close()
  times.sort()
  const cpu = after.userCPUTime + after.systemCPUTime - before.userCPUTime - before.systemCPUTime
  return {
    p50: quantile(times, 0.5) * 1000,
    p99: quantile(times, 0.99) * 1000,
    wakeups: (after.voluntaryContextSwitches - before.voluntaryContextSwitches) / calls,
    cpu: cpu / calls,
    wall: (wall * 1000) / calls,
  }
}

function runChild(name, mode, calls) {
  const args = [self, "--child", name, "--calls", String(calls), "--era", flags.era]
  const [file, argv] =
    mode === "pinned" ? ["taskset", ["-c", "0", process.execPath, ...args]] : [process.execPath, args]
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${name}: exit ${code}`))))
  })
}

/** A busy loop on every CPU but one, for the loaded mode. */
function busyLoops() {
  const loops = Array.from({ length: Math.max(1, os.availableParallelism() - 1) }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  )
  return () => loops.forEach((loop) => loop.kill("SIGKILL"))
}

async function main() {
  const calls = Number(flags.calls)
  const clients = flags.clients.split(",")
  const rows = []
  for (const mode of flags.modes.split(",")) {
    const stop = mode === "busy" ? busyLoops() : () => {}
    const results = Object.fromEntries(clients.map((c) => [c, []]))
    try {
      for (let round = 0; round < Number(flags.rounds); round++) {
        // Rotate who goes first, so the clients share the machine's state.
        for (let i = 0; i < clients.length; i++) {
          const name = clients[(i + round) % clients.length]
          results[name].push(await runChild(name, mode, calls))
        }
      }
    } finally {
      stop()
    }
    for (const name of clients) {
      const of = (key) => median(results[name].map((r) => r[key]))
      rows.push([mode, name, of("p50"), of("p99"), of("wakeups"), of("cpu"), of("wall")].map(formatCell))
    }
  }
  console.log(table(rows, ["mode", "client", "p50 µs", "p99 µs", "wake-ups/call", "CPU µs/call", "wall µs/call"]))
}

const formatCell = (x) => (typeof x === "number" ? formatNumber(x) : x)

if (flags.child) {
  process.stdout.write(JSON.stringify(await measure(flags.child, Number(flags.calls))))
} else {
  await main()
}
