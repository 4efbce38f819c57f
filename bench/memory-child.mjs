// One memory measurement in a process of its own, so that its RSS is only its own:
//
//   node --expose-gc memory-child.mjs peak <client> <era> <refserver> [servers] [calls] [inFlight]
//     holds `servers` servers (32), makes `calls` echo calls (50,000) with `inFlight` (64)
//     in flight spread over them, then reports the peak RSS of the process.
//   node --expose-gc memory-child.mjs cycles <client> <era> <refserver> [cycles] [warmup]
//     load, call echo 10 times, close: `warmup` (200) times, then `cycles` (100) times more;
//     reports the RSS (and JS heap) growth over those cycles, measured after a full GC.
//   node --expose-gc memory-child.mjs inventory <client> <era> <refserver> <tools>
//     opens one server listing `tools` tools and reports the RSS it adds while open, after
//     a full GC (one warm-up open and close of a 4-tool server first, so that loading the
//     client's own code is not counted).
//
// <client> is toolnexus, v1, v2 or floor; <era> 2025 or 2026 (lib/clients.mjs).
//
// Prints one line of JSON on stdout.

import { readFileSync } from "node:fs"
import { setTimeout as sleep } from "node:timers/promises"
import { makeClient } from "./lib/clients.mjs"
import { serverCommand } from "./lib/refserver.mjs"

const [mode, kind, era, bin, ...rest] = process.argv.slice(2)
const numbers = rest.map(Number)
const MiB = 1024 * 1024
const ARGS = { text: "hello world" }

async function settle() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.()
    await sleep(50)
  }
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage()
  return { rss, heapUsed, external: external + arrayBuffers }
}

/**
 * The high-water mark of this process's RSS. On Linux VmHWM, which starts afresh at exec;
 * getrusage's maxRSS does not: it keeps the parent's RSS at fork, that of the bench runner.
 */
function peakRss() {
  try {
    const status = readFileSync("/proc/self/status", "utf8")
    const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1])
    if (kib > 0) return kib * 1024
  } catch {}
  return process.resourceUsage().maxRSS * 1024
}

const endpoint = (options) => ({ command: serverCommand(bin, options) })

async function peak(servers = 32, calls = 50_000, inFlight = 64) {
  const client = await makeClient(kind, era)
  const endpoints = Array.from({ length: servers }, () => endpoint())
  const session = await client.open(endpoints)
  const callers = endpoints.map((_, i) => session.caller(i, "echo"))
  let next = 0
  const worker = async () => {
    while (next < calls) {
      const i = next++
      await callers[i % servers](ARGS)
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
  const { rss, heapUsed } = process.memoryUsage()
  const maxRss = peakRss()
  await session.close()
  return { peakRssMiB: maxRss / MiB, rssMiB: rss / MiB, heapUsedMiB: heapUsed / MiB }
}

async function cycles(count = 100, warmup = 200) {
  const client = await makeClient(kind, era)
  const cycle = async () => {
    const session = await client.open([endpoint()])
    const echo = session.caller(0, "echo")
    for (let i = 0; i < 10; i++) await echo(ARGS)
    await session.close()
  }
  for (let i = 0; i < warmup; i++) await cycle()
  const before = await settle()
  for (let i = 0; i < count; i++) await cycle()
  const after = await settle()
  return {
    rssGrowthMiB: (after.rss - before.rss) / MiB,
    heapGrowthMiB: (after.heapUsed - before.heapUsed) / MiB,
    externalGrowthMiB: (after.external - before.external) / MiB,
    rssAfterMiB: after.rss / MiB,
  }
}

async function inventory(tools) {
  const client = await makeClient(kind, era)
  await (await client.open([endpoint()])).close()
  const before = await settle()
  const session = await client.open([endpoint({ tools, pageSize: 100 })])
  const open = await settle()
  if (session.toolCount !== tools) throw new Error(`listed ${session.toolCount} tools, not ${tools}`)
  await session.close()
  return { extraRssMiB: (open.rss - before.rss) / MiB, extraHeapMiB: (open.heapUsed - before.heapUsed) / MiB }
}

const run = { peak, cycles, inventory }[mode]
if (!run) {
  console.error(`unknown mode "${mode}"`)
  process.exit(2)
}
const result = await run(...numbers.filter((n) => Number.isFinite(n)))
process.stdout.write(JSON.stringify(result) + "\n")
process.exit(0)
