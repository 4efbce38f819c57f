// The scenarios. Each one opens what it needs per client in `setup`, then the runner calls
// `round` for every client in turn (toolnexus, SDK, floor, rotating who goes first), so
// the clients share the same machine state; `rows` say what goes in the table.
//
// `scale` (1 by default) multiplies the call counts, for quick runs while developing.

import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { quantile } from "./stats.mjs"
import { serverCommand } from "./refserver.mjs"

const execFileAsync = promisify(execFile)
const MiB = 1024 * 1024
const ECHO_ARGS = { text: "hello world" }
const now = () => performance.now()

function check(condition, message) {
  if (!condition) throw new Error(message)
}

async function openEcho(client, bin, options) {
  const session = await client.open([serverCommand(bin, options)])
  const echo = session.caller(0, "echo")
  const out = await echo(ECHO_ARGS)
  check(out === ECHO_ARGS.text, `${client.name}: echo answered ${JSON.stringify(out)}`)
  return { session, echo }
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
  await Promise.all(Array.from({ length: inFlight }, worker))
}

export function scenarios({ bin, scale = 1 }) {
  const n = (count) => Math.max(1, Math.round(count * scale))
  const SEQUENTIAL_CALLS = n(5000)
  const THROUGHPUT_CALLS = n(50_000)
  const LARGE_BYTES = 8 * MiB
  const LARGE_CALLS = n(20)
  const MANY_SERVERS = 32
  const INVENTORY = { tools: 5000, pageSize: 100 }
  const MEMORY_CALLS = n(50_000)
  const MEMORY_CYCLES = n(100)
  // Node's own RSS climbs in steps for the first ~150 cycles of any client, the bare floor
  // included (JIT code, V8 heap sizing, allocator arenas), then stays flat; a leak keeps going.
  const MEMORY_WARMUP = n(200)
  const memoryChild = fileURLToPath(new URL("../memory-child.mjs", import.meta.url))

  return [
    {
      id: "sequential",
      title: `sequential latency: ${SEQUENTIAL_CALLS} echo calls, one at a time`,
      rounds: 15,
      setup: (client) => openEcho(client, bin),
      async round({ echo }) {
        for (let i = 0; i < 500; i++) await echo(ECHO_ARGS)
        const times = new Float64Array(SEQUENTIAL_CALLS)
        for (let i = 0; i < SEQUENTIAL_CALLS; i++) {
          const start = now()
          await echo(ECHO_ARGS)
          times[i] = now() - start
        }
        times.sort()
        return { p50: quantile(times, 0.5) * 1000, p99: quantile(times, 0.99) * 1000 }
      },
      teardown: ({ session }) => session.close(),
      rows: [
        {
          metric: "p50",
          label: "sequential echo p50",
          unit: "µs",
          better: "lower",
          target: { ratio: 0.8, belowFloor: true },
        },
        { metric: "p99", label: "sequential echo p99", unit: "µs", better: "lower", target: { ratio: 0.3 } },
      ],
    },
    {
      id: "throughput",
      title: `throughput: ${THROUGHPUT_CALLS} echo calls, 64 in flight`,
      rounds: 7,
      setup: (client) => openEcho(client, bin),
      async round({ echo }) {
        await pool(n(2000), 64, () => echo(ECHO_ARGS))
        const start = now()
        await pool(THROUGHPUT_CALLS, 64, () => echo(ECHO_ARGS))
        return { cps: THROUGHPUT_CALLS / ((now() - start) / 1000) }
      },
      teardown: ({ session }) => session.close(),
      rows: [
        { metric: "cps", label: "throughput, 64 in flight", unit: "calls/s", better: "higher", target: { ratio: 2 } },
      ],
    },
    {
      id: "large",
      title: `large results: a ${LARGE_BYTES / MiB} MiB text result, ${LARGE_CALLS} times`,
      rounds: 7,
      async setup(client) {
        const state = await openEcho(client, bin)
        state.text = state.session.caller(0, "text")
        return state
      },
      async round({ text }) {
        const args = { bytes: LARGE_BYTES }
        check((await text(args)).length === LARGE_BYTES, "wrong result length")
        const start = now()
        for (let i = 0; i < LARGE_CALLS; i++) {
          const out = await text(args)
          check(out.length === LARGE_BYTES, "wrong result length")
        }
        return { mbps: (LARGE_CALLS * LARGE_BYTES) / 1e6 / ((now() - start) / 1000) }
      },
      teardown: ({ session }) => session.close(),
      rows: [{ metric: "mbps", label: "8 MiB results", unit: "MB/s", better: "higher", target: { ratio: 4 } }],
    },
    {
      id: "connect",
      title: `connect: spawn, initialize and list 1 server, and ${MANY_SERVERS} servers at once`,
      rounds: 21,
      async round(_, client) {
        const timeOpen = async (count) => {
          const commands = Array.from({ length: count }, () => serverCommand(bin))
          const start = now()
          const session = await client.open(commands)
          const ms = now() - start
          check(session.toolCount === count * 4, `${client.name}: listed ${session.toolCount} tools`)
          await session.close()
          return ms
        }
        return { one: await timeOpen(1), many: await timeOpen(MANY_SERVERS) }
      },
      rows: [
        { metric: "one", label: "connect 1 server", unit: "ms", better: "lower" },
        {
          metric: "many",
          label: `connect ${MANY_SERVERS} servers`,
          unit: "ms",
          better: "lower",
          target: { ratio: 0.5 },
        },
      ],
    },
    {
      id: "inventory",
      title: `big inventory: one server listing ${INVENTORY.tools} tools over ${INVENTORY.tools / INVENTORY.pageSize} pages`,
      rounds: 11,
      async round(_, client) {
        const commands = [serverCommand(bin, INVENTORY)]
        let start = now()
        const session = await client.open(commands)
        const load = now() - start
        check(session.toolCount === INVENTORY.tools, `${client.name}: listed ${session.toolCount} tools`)
        await session.close()
        start = now()
        const count = await client.list(commands)
        const list = now() - start
        check(count === INVENTORY.tools, `${client.name}: listed ${count} tools`)
        return { load, list }
      },
      rows: [
        {
          metric: "load",
          label: `inventory ${INVENTORY.tools} tools (loadMcp)`,
          unit: "ms",
          better: "lower",
          target: { ratio: 0.2 },
        },
        { metric: "list", label: `inventory ${INVENTORY.tools} tools (listMcpTools)`, unit: "ms", better: "lower" },
      ],
    },
    {
      id: "memory",
      title:
        `memory, in child processes: peak RSS holding ${MANY_SERVERS} servers after ${MEMORY_CALLS} calls; ` +
        `RSS growth over ${MEMORY_CYCLES} load/close cycles after ${MEMORY_WARMUP} to warm up`,
      rounds: 3,
      async round(_, client) {
        const child = async (...args) => {
          const { stdout } = await execFileAsync(process.execPath, ["--expose-gc", memoryChild, ...args.map(String)], {
            maxBuffer: 1 << 20,
          })
          return JSON.parse(stdout.trim().split("\n").pop())
        }
        const peak = await child("peak", client.name, bin, MANY_SERVERS, MEMORY_CALLS, 64)
        const cycles = await child("cycles", client.name, bin, MEMORY_CYCLES, MEMORY_WARMUP)
        return {
          peak: peak.peakRssMiB,
          growth: cycles.rssGrowthMiB,
          heapGrowth: cycles.heapGrowthMiB,
        }
      },
      rows: [
        {
          metric: "peak",
          label: `peak RSS, ${MANY_SERVERS} servers`,
          unit: "MiB",
          better: "lower",
          target: { ratio: 0.8 },
        },
        {
          metric: "growth",
          label: `RSS growth, ${MEMORY_CYCLES} cycles`,
          unit: "MiB",
          better: "lower",
          target: { atMost: 2 },
          noRatio: true,
        },
        {
          metric: "heapGrowth",
          label: `JS heap growth, ${MEMORY_CYCLES} cycles`,
          unit: "MiB",
          better: "lower",
          noRatio: true,
        },
      ],
    },
  ]
}
