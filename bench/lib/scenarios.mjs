// The scenarios. Each one opens what it needs per client in `setup`, then the runner calls
// `round` for every client in turn (rotating who goes first), so the clients share the
// same machine state; `rows` say what goes in the table. Ids are "group/size": `--only
// large` runs every size of the large results, `--only large/1MiB` one of them.
//
// `scale` (1 by default) multiplies call counts and load/close cycles, for quick runs.
// `ctx` carries what the runner knows: `usageOptions` for lib/usage.mjs (the busy loop's
// pid to leave out) and, for HTTP scenarios, the server's URL.

import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { quantile } from "./stats.mjs"
import { serverCommand } from "./refserver.mjs"
import { snapshot, usageSince } from "./usage.mjs"

const execFileAsync = promisify(execFile)
const KiB = 1024
const MiB = 1024 * KiB
const ECHO_ARGS = { text: "hello world" }
const now = () => performance.now()
const memoryChild = fileURLToPath(new URL("../memory-child.mjs", import.meta.url))

function check(condition, message) {
  if (!condition) throw new Error(message)
}

/** Runs `total` calls of `call()` with `inFlight` outstanding at any time. */
async function pool(total, inFlight, call) {
  let next = 0
  const worker = async () => {
    while (next < total) {
      next++
      await call()
    }
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, total) }, worker))
}

/** `measure()` between two usage snapshots: its result plus CPU µs and switches per call. */
async function withUsage(ctx, calls, measure) {
  const before = snapshot(ctx.usageOptions)
  const result = await measure()
  const usage = usageSince(before, ctx.usageOptions)
  return {
    ...result,
    cpu: (usage.clientCpuUs + (Number.isNaN(usage.serverCpuUs) ? 0 : usage.serverCpuUs)) / calls,
    vcs: usage.clientSwitches / calls,
  }
}

const usageRows = (label) => [
  { metric: "cpu", label: `${label}: CPU per call, client + server`, unit: "µs", better: "lower" },
  { metric: "vcs", label: `${label}: voluntary switches per call, client`, unit: "", better: "lower" },
]

const endpointOf = (bin, ctx, options) => (ctx.url ? { url: ctx.url } : { command: serverCommand(bin, options) })

async function openEcho(client, endpoint) {
  const session = await client.open([endpoint])
  const echo = session.caller(0, "echo")
  const out = await echo(ECHO_ARGS)
  check(out === ECHO_ARGS.text, `echo answered ${JSON.stringify(out)}`)
  return { session, echo }
}

function sequential({ bin, n, http }) {
  const calls = n(http ? 2000 : 3000)
  const where = http ? "HTTP" : "stdio"
  const label = http ? "HTTP sequential" : "sequential"
  return {
    id: http ? "http/sequential" : "sequential",
    http,
    title: `${label} latency: ${calls} echo calls over ${where}, one at a time`,
    rounds: 7,
    setup: (client, ctx) => openEcho(client, endpointOf(bin, ctx)),
    async round({ echo }, _, ctx) {
      for (let i = 0; i < n(500); i++) await echo(ECHO_ARGS)
      const times = new Float64Array(calls)
      return withUsage(ctx, calls, async () => {
        for (let i = 0; i < calls; i++) {
          const start = now()
          await echo(ECHO_ARGS)
          times[i] = now() - start
        }
        times.sort()
        return { p50: quantile(times, 0.5) * 1000, p99: quantile(times, 0.99) * 1000 }
      })
    },
    teardown: ({ session }) => session.close(),
    rows: [
      {
        metric: "p50",
        label: `${label} echo p50`,
        unit: "µs",
        better: "lower",
        target: http ? { ratio: 0.5 } : { ratio: 0.8, floor: 1.2 },
      },
      {
        metric: "p99",
        label: `${label} echo p99`,
        unit: "µs",
        better: "lower",
        target: http ? undefined : { ratio: 0.3, only: "v1" },
      },
      ...usageRows(label),
    ],
  }
}

function throughput({ bin, n, http }, inFlight) {
  const calls = n(http ? 5000 : inFlight === 1 ? 3000 : 20_000)
  const label = `${http ? "HTTP " : ""}throughput, ${inFlight} in flight`
  const target = inFlight !== 64 ? undefined : http ? { ratio: 3 } : { ratio: 2.5, modern: 2 }
  return {
    id: `${http ? "http/" : ""}throughput/${inFlight}`,
    http,
    title: `${label}: ${calls} echo calls`,
    rounds: 5,
    setup: (client, ctx) => openEcho(client, endpointOf(bin, ctx)),
    async round({ echo }, _, ctx) {
      await pool(Math.max(inFlight, n(2000)), inFlight, () => echo(ECHO_ARGS))
      return withUsage(ctx, calls, async () => {
        const start = now()
        await pool(calls, inFlight, () => echo(ECHO_ARGS))
        return { cps: calls / ((now() - start) / 1000) }
      })
    },
    teardown: ({ session }) => session.close(),
    rows: [{ metric: "cps", label, unit: "calls/s", better: "higher", target }, ...usageRows(label)],
  }
}

function large({ bin, n }, bytes, name) {
  // About 32 MiB of results per round, after one to warm up; a 64 MiB result once, cold:
  // the SDKs take a minute over it (their read buffers grow by concatenation).
  const huge = bytes >= 64 * MiB
  const calls = Math.max(1, n(Math.min(2000, Math.round((32 * MiB) / bytes))))
  const label = `${name} results`
  return {
    id: `large/${name}`,
    title: `large results: a ${name} text result, ${calls} times`,
    rounds: huge ? 1 : 5,
    async setup(client, ctx) {
      const state = await openEcho(client, endpointOf(bin, ctx))
      state.text = state.session.caller(0, "text")
      return state
    },
    async round({ text }, _, ctx) {
      const args = { bytes }
      if (!huge) check((await text(args)).length === bytes, "wrong result length")
      return withUsage(ctx, calls, async () => {
        const start = now()
        for (let i = 0; i < calls; i++) {
          const out = await text(args)
          check(out.length === bytes, "wrong result length")
        }
        return { mbps: (calls * bytes) / 1e6 / ((now() - start) / 1000) }
      })
    },
    teardown: ({ session }) => session.close(),
    rows: [
      { metric: "mbps", label, unit: "MB/s", better: "higher", target: bytes === 8 * MiB ? { ratio: 5 } : undefined },
      usageRows(label)[0],
    ],
  }
}

function connect({ bin }, count) {
  return {
    id: `connect/${count}`,
    title: `connect: spawn, open and list ${count} server${count > 1 ? "s" : ""} at once`,
    rounds: count >= 128 ? 3 : count >= 32 ? 7 : 11,
    async round(_, client) {
      const endpoints = Array.from({ length: count }, () => ({ command: serverCommand(bin) }))
      const start = now()
      const session = await client.open(endpoints)
      const ms = now() - start
      check(session.toolCount === count * 4, `listed ${session.toolCount} tools`)
      await session.close()
      return { ms }
    },
    rows: [
      {
        metric: "ms",
        label: `connect ${count} server${count > 1 ? "s" : ""}`,
        unit: "ms",
        better: "lower",
        target: count === 32 ? { ratio: 0.2 } : undefined,
      },
    ],
  }
}

/** Runs memory-child.mjs in a process of its own; resolves its last line of JSON. */
async function child(...args) {
  const { stdout } = await execFileAsync(process.execPath, ["--expose-gc", memoryChild, ...args.map(String)], {
    maxBuffer: 1 << 20,
  })
  return JSON.parse(stdout.trim().split("\n").pop())
}

function inventory({ bin }, tools) {
  const options = { tools, pageSize: 100 }
  const big = tools >= 100_000
  const label = `inventory ${tools.toLocaleString("en-US")} tools`
  return {
    id: `inventory/${tools}`,
    title: `big inventory: one server listing ${label.slice(10)} over ${tools / 100} pages; extra RSS in a child process`,
    rounds: big ? 1 : tools >= 5000 ? 5 : 7,
    async round(_, client) {
      const endpoints = [{ command: serverCommand(bin, options) }]
      let start = now()
      const session = await client.open(endpoints)
      const load = now() - start
      check(session.toolCount === tools, `listed ${session.toolCount} tools`)
      await session.close()
      start = now()
      const count = await client.list(endpoints)
      const list = now() - start
      check(count === tools, `listed ${count} tools`)
      const { extraRssMiB } = await child("inventory", client.kind, client.era, bin, tools)
      return { load, list, rss: extraRssMiB }
    },
    rows: [
      {
        metric: "load",
        label: `${label} (open: loadMcp)`,
        unit: "ms",
        better: "lower",
        target: tools === 5000 ? { ratio: 0.15 } : undefined,
      },
      { metric: "list", label: `${label} (listMcpTools)`, unit: "ms", better: "lower" },
      { metric: "rss", label: `${label}: extra RSS while open`, unit: "MiB", better: "lower" },
    ],
  }
}

function memory({ bin, n }) {
  const servers = 32
  const calls = n(50_000)
  const cycles = n(100)
  // Node's own RSS climbs in steps for the first ~150 cycles of any client, the bare floor
  // included (JIT code, V8 heap sizing, allocator arenas), then stays flat; a leak keeps going.
  const warmup = n(200)
  return {
    id: "memory",
    title:
      `memory, in child processes: peak RSS holding ${servers} servers after ${calls} calls; ` +
      `RSS growth over ${cycles} load/close cycles after ${warmup} to warm up`,
    rounds: 2,
    async round(_, client) {
      const peak = await child("peak", client.kind, client.era, bin, servers, calls, 64)
      const cycled = await child("cycles", client.kind, client.era, bin, cycles, warmup)
      return { peak: peak.peakRssMiB, growth: cycled.rssGrowthMiB, heapGrowth: cycled.heapGrowthMiB }
    },
    rows: [
      { metric: "peak", label: `peak RSS, ${servers} servers`, unit: "MiB", better: "lower", target: { ratio: 0.8 } },
      {
        metric: "growth",
        label: `RSS growth, ${cycles} cycles`,
        unit: "MiB",
        better: "lower",
        target: { atMost: 2 },
        noRatio: true,
      },
      { metric: "heapGrowth", label: `JS heap growth, ${cycles} cycles`, unit: "MiB", better: "lower", noRatio: true },
    ],
  }
}

export function scenarios({ bin, scale = 1 }) {
  const n = (count) => Math.max(1, Math.round(count * scale))
  const stdio = { bin, n, http: false }
  const http = { bin, n, http: true }
  return [
    sequential(stdio),
    ...[1, 64, 1024].map((k) => throughput(stdio, k)),
    ...[
      [KiB, "1KiB"],
      [MiB, "1MiB"],
      [8 * MiB, "8MiB"],
      [64 * MiB, "64MiB"],
    ].map(([bytes, name]) => large(stdio, bytes, name)),
    ...[1, 32, 128].map((k) => connect(stdio, k)),
    ...[500, 5000, 100_000].map((k) => inventory(stdio, k)),
    memory(stdio),
    sequential(http),
    throughput(http, 64),
  ]
}
