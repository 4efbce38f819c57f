// The soak run: one store under steady traffic for an hour (or 90 s with --short), sampled
// every 10 s, judged on what a long-lived host needs: memory that stops growing, and
// descriptors, threads and processes given back when the store closes.
//
//   node bench/soak.mjs [--short] [--minutes N] [--warmup N] [--rate N]
//   TOOLNEXUS_SOAK=short node bench/soak.mjs
//
// The store has 20 servers: 4 that exit a few seconds after each start (and are
// restarted), 4 whose tool lists change every 2 s (list_changed), 2 over streamable HTTP
// (stateless and with sessions), 1 behind OAuth whose access tokens live 3 s, 3 plain
// stdio ones, and 3 agent views of 2 servers each. Guest agent views come and go. Calls
// go out at a steady rate to random tools of random views; about one in six is aborted
// and one in eight times out. The fixtures are the test suite's (__test__/fixtures); the
// remote ones run in a process of their own (lib/soak-servers.mjs), so that the RSS
// sampled is the client's alone.
//
// Samples: RSS, V8 heap, open fds (/proc/self/fd), threads (/proc/self/status), the
// processes below this one (/proc), calls pending (started minus settled). Targets, each
// judged in the verdict (exit code 1 when one fails):
// - RSS grows less than 5 MB an hour after warm-up: least-squares slope over the samples
//   after warm-up, judged when that window is at least 20 minutes (a shorter one is
//   noise and is reported, not judged);
// - every call settles: none pending once traffic stops and the last timeout has passed;
// - no zombie seen in two samples in a row, and none left;
// - after close, fds, threads and processes back at the baseline taken before the store
//   (after the addon's runtime had started with a warm-up store, opened and closed).
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { createInterface } from "node:readline"
import { descendants, openFds, threadCount } from "./lib/proc.mjs"
import { repoRoot } from "./lib/refserver.mjs"
import { table } from "./lib/stats.mjs"

const { values: flags } = parseArgs({
  options: {
    short: { type: "boolean", default: process.env.TOOLNEXUS_SOAK === "short" },
    minutes: { type: "string" },
    warmup: { type: "string" },
    rate: { type: "string", default: "10" },
  },
})
const TRAFFIC_S = flags.minutes ? Number(flags.minutes) * 60 : flags.short ? 90 : 3600
const WARMUP_S = flags.warmup ? Number(flags.warmup) : Math.min(600, Math.round(TRAFFIC_S / 3))
const RATE = Number(flags.rate)
const SAMPLE_MS = 10_000
const JUDGED_WINDOW_S = 20 * 60
const RSS_MB_PER_HOUR = 5
const CALL_TIMEOUT_MS = 20_000

const packageDir = process.env.TOOLNEXUS_BENCH_PACKAGE ?? repoRoot
const { createMcpStore } = await import(pathToFileURL(path.join(packageDir, "index.js")).href)
const fixture = (name) => fileURLToPath(new URL(`../__test__/fixtures/${name}`, import.meta.url))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const pick = (list) => list[Math.floor(Math.random() * list.length)]
const mb = (bytes) => (bytes / 2 ** 20).toFixed(1)
const log = (line) => process.stderr.write(`[soak] ${line}\n`)

const node = (script, ...args) => ({ command: process.execPath, args: [fixture(script), ...args] })
const steady = () => node("server.mjs")

// ---------------------------------------------------------------- the servers

const remote = spawn(process.execPath, [fileURLToPath(new URL("lib/soak-servers.mjs", import.meta.url))], {
  stdio: ["pipe", "pipe", "inherit"],
})
const remoteLines = createInterface({ input: remote.stdout })[Symbol.asyncIterator]()
const nextLine = async () => JSON.parse((await remoteLines.next()).value ?? "null")
const urls = await nextLine()
const tokens = new Map()
const oauthOptions = {
  tokenStore: {
    get: (key) => tokens.get(key),
    set: (key, value) => void tokens.set(key, value),
    delete: (key) => void tokens.delete(key),
  },
  // The person approves at once: the authorization server's redirect is the answer.
  onAuthorize: async (url) => new URL((await fetch(url, { redirect: "manual" })).headers.get("location") ?? ""),
}

const storeServers = {
  http_stateless: { url: urls.stateless },
  http_sessions: { url: urls.sessions },
  oauth_docs: { url: urls.oauth },
}
for (let i = 0; i < 4; i++) storeServers[`crashy_${i}`] = node("store-flaky.mjs", `--exit-after=${4000 + 1000 * i}`)
for (let i = 0; i < 4; i++) storeServers[`churn_${i}`] = node("store-dynamic.mjs", "--churn=2000")
for (let i = 0; i < 3; i++) storeServers[`plain_${i}`] = steady()
const AGENTS = ["planner", "coder", "reviewer"]

const catalogDir = mkdtempSync(path.join(os.tmpdir(), "toolnexus-soak-"))
const storeOptions = { oauth: oauthOptions, backoffMs: 100, backoffMaxMs: 1000, catalogDir }

// ---------------------------------------------------------------- sampling

const samples = []
const calls = { started: 0, settled: 0 }
/** Settled calls by kind (plain, aborted, timed out) and outcome. */
const outcomes = {}
const pending = new Map()
let zombiesBefore = new Set()
const lingeringZombies = new Set()
let t0 = 0

function sample(store) {
  const tree = descendants()
  const zombies = new Set(tree.filter((p) => p.state === "Z").map((p) => p.pid))
  for (const pid of zombies) if (zombiesBefore.has(pid)) lingeringZombies.add(pid)
  zombiesBefore = zombies
  const states = {}
  for (const s of Object.values(store?.status() ?? {})) states[s.state] = (states[s.state] ?? 0) + 1
  const memory = process.memoryUsage()
  return {
    t: Math.round((performance.now() - t0) / 1000),
    rss: memory.rss,
    heap: memory.heapUsed,
    fds: openFds(),
    threads: threadCount(),
    processes: tree.length,
    zombies: zombies.size,
    pending: calls.started - calls.settled,
    calls: calls.settled,
    states,
  }
}

/** Settles when `check()` holds, or after `ms`; resolves whether it held. */
async function until(check, ms) {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) return false
    await sleep(250)
  }
  return true
}

// ---------------------------------------------------------------- traffic

/** One call to a random tool of `view`: plain, aborted, or one that times out. */
function oneCall(view) {
  const tools = view.listTools().map((t) => t.name)
  const slow = tools.filter((name) => /_(sleep|hang)$/.test(name))
  const quick = tools.filter((name) => /_(echo|ping|first|whoami|churn_\d+|text|structured)$/.test(name))
  const roll = Math.random()
  let kind = "plain"
  let name = pick(quick)
  let args = { text: "soak" }
  const ctx = { timeout: CALL_TIMEOUT_MS }
  if (roll < 0.17 && slow.length > 0) {
    kind = "aborted"
    name = pick(slow)
    args = { ms: 2000 }
    ctx.signal = AbortSignal.timeout(10 + Math.floor(Math.random() * 500))
  } else if (roll < 0.3 && slow.length > 0) {
    kind = "timed out"
    name = pick(slow)
    args = { ms: 3000 }
    ctx.timeout = 100 + Math.floor(Math.random() * 700)
  }
  if (!name) return
  const id = ++calls.started
  pending.set(id, Date.now())
  const count = (outcome) => (outcomes[`${kind} ${outcome}`] = (outcomes[`${kind} ${outcome}`] ?? 0) + 1)
  view
    .callTool(name, args, ctx)
    .then(
      (result) => count(result.isError ? "isError" : "ok"),
      () => count("rejected"), // callTool never rejects: shown in the figures if it does
    )
    .finally(() => {
      calls.settled++
      pending.delete(id)
    })
}

// ---------------------------------------------------------------- the run

// Warm-up store: starts the addon's runtime and the thread pools the baseline should hold.
const warm = createMcpStore({ warm: steady() }, { catalog: false })
await warm.waitReady()
await warm.callTool("warm_echo", { text: "warm" })
await warm.close()
await sleep(2000)
t0 = performance.now()
const baseline = sample()
log(`baseline: ${baseline.fds} fds, ${baseline.threads} threads, ${baseline.processes} processes`)

const store = createMcpStore(storeServers, storeOptions)
for (const [i, agent] of AGENTS.entries())
  store.forAgent(agent).addServers({ [`tools_${i}a`]: steady(), [`tools_${i}b`]: steady() })
const views = [store, ...AGENTS.map((agent) => store.forAgent(agent))]
await store.waitReady()
log(`store up: ${JSON.stringify(sample(store).states)}; traffic for ${TRAFFIC_S} s, warm-up ${WARMUP_S} s`)

let guests = 0
const guestViews = []
const ticker = setInterval(() => oneCall(pick([...views, ...guestViews])), 1000 / RATE)
const guestTicker = setInterval(() => {
  // A guest agent arrives with a server of its own; the oldest of three leaves.
  const view = store.forAgent(`guest-${++guests}`).addServers({ scratch: steady() })
  guestViews.push(view)
  if (guestViews.length > 2) guestViews.shift().removeServer("scratch")
}, 15_000)
const sampler = setInterval(() => {
  const s = sample(store)
  samples.push(s)
  log(`t=${s.t}s rss ${mb(s.rss)} MB, ${s.fds} fds, ${s.threads} threads, ${s.processes} procs, ${s.pending} pending`)
}, SAMPLE_MS)

await sleep(TRAFFIC_S * 1000)
clearInterval(ticker)
clearInterval(guestTicker)
const drained = await until(() => pending.size === 0, CALL_TIMEOUT_MS + 10_000)
clearInterval(sampler)
const stuck = [...pending.values()].map((since) => Date.now() - since)
const lastStates = sample(store).states
await store.close()
const back = () => {
  const s = sample()
  return s.fds <= baseline.fds && s.threads <= baseline.threads && s.processes <= baseline.processes
}
await until(back, 30_000)
const after = sample()
remote.stdin.end()
const asked = await nextLine()
await new Promise((resolve) => (remote.exitCode === null ? remote.once("exit", resolve) : resolve(undefined)))
rmSync(catalogDir, { recursive: true, force: true })

// ---------------------------------------------------------------- verdict

/** Least-squares slope of RSS over the samples from `from` s on, in MB an hour. */
function slopeMbPerHour(points) {
  const n = points.length
  if (n < 2) return NaN
  const mt = points.reduce((a, p) => a + p.t, 0) / n
  const mr = points.reduce((a, p) => a + p.rss, 0) / n
  const cov = points.reduce((a, p) => a + (p.t - mt) * (p.rss - mr), 0)
  const varT = points.reduce((a, p) => a + (p.t - mt) ** 2, 0)
  return ((cov / varT) * 3600) / 2 ** 20
}
const steadyPoints = samples.filter((s) => s.t >= WARMUP_S)
const window = steadyPoints.length > 1 ? steadyPoints.at(-1).t - steadyPoints[0].t : 0
const slope = slopeMbPerHour(steadyPoints)
const judged = window >= JUDGED_WINDOW_S

const rows = samples.map((s) => [
  s.t,
  mb(s.rss),
  mb(s.heap),
  s.fds,
  s.threads,
  s.processes,
  s.zombies,
  s.pending,
  s.calls,
  Object.entries(s.states)
    .map(([state, n]) => `${state} ${n}`)
    .join(", "),
])
console.log(
  `soak: ${TRAFFIC_S} s of traffic at ${RATE} calls/s, samples every ${SAMPLE_MS / 1000} s, warm-up ${WARMUP_S} s`,
)
console.log(
  `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, ${mb(os.totalmem())} MB, load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}, node ${process.version}`,
)
console.log(
  table(rows, ["t s", "RSS MB", "heap MB", "fds", "threads", "procs", "zombies", "pending", "settled", "states"]),
)
console.log(
  `calls: ${calls.started} started, ${calls.settled} settled ${JSON.stringify(outcomes)}; guest views ${guests}; ` +
    `states at the end ${JSON.stringify(lastStates)}`,
)
console.log(`OAuth server: token requests ${JSON.stringify(asked.grants)}, ${asked.calls} tools/call`)
const rssOf = (list) =>
  list.length ? `${mb(Math.min(...list.map((s) => s.rss)))}–${mb(Math.max(...list.map((s) => s.rss)))} MB` : "—"
console.log(`RSS after warm-up ${rssOf(steadyPoints)}, slope ${slope.toFixed(2)} MB/h over ${window} s`)

const verdicts = [
  [
    `RSS grows < ${RSS_MB_PER_HOUR} MB/h after warm-up`,
    judged ? slope < RSS_MB_PER_HOUR : undefined,
    `${slope.toFixed(2)} MB/h over ${window} s${judged ? "" : ` (not judged: under ${JUDGED_WINDOW_S} s)`}`,
  ],
  [
    "every call settles",
    drained && calls.settled === calls.started && !Object.keys(outcomes).some((k) => k.endsWith("rejected")),
    `${calls.started - calls.settled} pending${stuck.length ? `, oldest ${Math.max(...stuck)} ms` : ""}`,
  ],
  ["no lingering zombie", lingeringZombies.size === 0 && after.zombies === 0, `${lingeringZombies.size} seen twice`],
  [
    "fds back to baseline",
    after.fds <= baseline.fds,
    `${baseline.fds} → ${Math.max(...samples.map((s) => s.fds))} → ${after.fds}`,
  ],
  [
    "threads back to baseline",
    after.threads <= baseline.threads,
    `${baseline.threads} → ${Math.max(...samples.map((s) => s.threads))} → ${after.threads}`,
  ],
  [
    "processes back to baseline",
    after.processes <= baseline.processes,
    `${baseline.processes} → ${Math.max(...samples.map((s) => s.processes))} → ${after.processes}`,
  ],
]
console.log(
  table(
    verdicts.map(([target, ok, figures]) => [target, ok === undefined ? "n/a" : ok ? "pass" : "FAIL", figures]),
    ["target", "verdict", "figures (baseline → peak → after close)"],
  ),
)
const failed = verdicts.filter(([, ok]) => ok === false)
console.log(failed.length === 0 ? "soak: PASS" : `soak: FAIL (${failed.map(([t]) => t).join("; ")})`)
process.exitCode = failed.length === 0 ? 0 : 1
