// toolnexus benchmarks: every scenario runs toolnexus, the official SDK clients (v1
// @modelcontextprotocol/sdk, v2 @modelcontextprotocol/client) and the plain-Node floor
// against the same reference server, in both protocol eras, alternating rounds in one run;
// each scenario once on the idle machine and once beside a busy loop the bench starts.
//
//   node --expose-gc bench/run.mjs [--only sequential,throughput/64,http,...] [--scale 0.2]
//                                   [--passes idle,loaded] [--json results.json]
//
// See bench/README.md for what each scenario measures.

import { execFileSync } from "node:child_process"
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { parseArgs } from "node:util"
import { startBusyLoop, stopBusyLoop } from "./lib/busy.mjs"
import { CLIENTS, ERAS, makeClient } from "./lib/clients.mjs"
import { refserverPath, repoRoot, serverCommand, startHttpServer } from "./lib/refserver.mjs"
import { Notes, passTable } from "./lib/report.mjs"
import { scenarios } from "./lib/scenarios.mjs"
import { formatNumber } from "./lib/stats.mjs"

const { values: flags } = parseArgs({
  options: {
    only: { type: "string" },
    scale: { type: "string", default: "1" },
    passes: { type: "string", default: "idle,loaded" },
    json: { type: "string" },
  },
})
const scale = Number(flags.scale)
const only = flags.only?.split(",").map((s) => s.trim())
const passes = flags.passes.split(",").map((s) => s.trim())
const log = (line) => process.stderr.write(`${line}\n`)
/** A round that takes longer than this marks its client unavailable for the scenario. */
const ROUND_TIMEOUT_MS = 10 * 60_000

const selected = (id) => !only || only.some((o) => id === o || id.startsWith(`${o}/`))

function tryRun(file, args) {
  try {
    return execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return undefined
  }
}

/** The addon this platform loads: platform rehearsals leave other targets' beside it. */
function addonInfo(dir) {
  const libc =
    process.platform === "linux" ? (process.report.getReport().header.glibcVersionRuntime ? "-gnu" : "-musl") : ""
  const file = readdirSync(dir).find(
    (f) => f.startsWith(`toolnexus.${process.platform}-${process.arch}`) && f.endsWith(`${libc}.node`),
  )
  if (!file) return "not found"
  const bytes = readFileSync(path.join(dir, file))
  const built = statSync(path.join(dir, file)).mtime.toISOString().slice(0, 16).replace("T", " ")
  const sections = elfSections(bytes)
  const kind = !sections
    ? "build kind unknown"
    : sections.includes(".debug_info") || sections.includes(".symtab")
      ? "NOT a stripped release build"
      : "stripped release build"
  return `${path.join(dir, file)}, ${(bytes.length / 1e6).toFixed(1)} MB, ${kind}, built ${built} UTC`
}

/** Section names of a 64-bit little-endian ELF file, or undefined for anything else. */
function elfSections(b) {
  if (b.length < 64 || b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return undefined
  const shoff = Number(b.readBigUInt64LE(0x28))
  const shentsize = b.readUInt16LE(0x3a)
  const shnum = b.readUInt16LE(0x3c)
  const shstrndx = b.readUInt16LE(0x3e)
  const header = (i) => shoff + i * shentsize
  if (shoff === 0 || header(shnum) > b.length) return undefined
  const strings = Number(b.readBigUInt64LE(header(shstrndx) + 0x18))
  const names = []
  for (let i = 0; i < shnum; i++) {
    const start = strings + b.readUInt32LE(header(i))
    names.push(b.toString("latin1", start, b.indexOf(0, start)))
  }
  return names
}

function environment(bin) {
  const pkgDir = process.env.TOOLNEXUS_BENCH_PACKAGE ?? repoRoot
  const versionOf = (pkg) =>
    JSON.parse(readFileSync(path.join(repoRoot, "node_modules", pkg, "package.json"), "utf8")).version
  const ownVersion = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8")).version
  // The commit and working-tree state of this repository (the addon may come from elsewhere:
  // TOOLNEXUS_BENCH_PACKAGE; the addon line names its file and build time).
  const commit = tryRun("git", ["-C", repoRoot, "rev-parse", "--short", "HEAD"])
  const dirty = tryRun("git", ["-C", repoRoot, "status", "--porcelain", "--", "src", "index.js", "js"])
  const cpus = os.cpus()
  return {
    machine: `${cpus[0]?.model?.trim() ?? "unknown CPU"}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}`,
    versions: `Node ${process.version}, toolnexus ${ownVersion} (${commit ?? "?"}${dirty ? ", uncommitted changes" : ""}), v1 @modelcontextprotocol/sdk ${versionOf("@modelcontextprotocol/sdk")}, v2 @modelcontextprotocol/client ${versionOf("@modelcontextprotocol/client")}, ${tryRun("rustc", ["--version"]) ?? "rustc ?"}`,
    addon: addonInfo(pkgDir),
    refserver: bin,
    loadAverage: os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" "),
    date: new Date().toISOString(),
  }
}

function withTimeout(promise, ms) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const reasonOf = (error) =>
  String(error?.message ?? error)
    .split("\n")[0]
    .slice(0, 160)

/**
 * Why a client cannot take part at all, found once: toolnexus pinned to 2026-07-28 must
 * really speak it (until its modern era lands, it would measure 2025 under that name).
 */
async function preflight(client, endpoint) {
  if (!client.spokenVersion || client.era !== "2026") return undefined
  try {
    const spoken = await withTimeout(client.spokenVersion(endpoint), 30_000)
    return spoken === ERAS[client.era]
      ? undefined
      : `"protocol": "${ERAS[client.era]}" in its config, but it spoke ${spoken}`
  } catch (error) {
    return reasonOf(error)
  }
}

/** One pass of one scenario: setup, rounds (rotating who goes first), teardown. */
async function runPass(scenario, clients, ctx) {
  const entries = clients.map(({ client, unavailable }) => ({ client, unavailable, rounds: [], state: undefined }))
  for (const entry of entries) {
    if (entry.unavailable || !scenario.setup) continue
    try {
      entry.state = await withTimeout(scenario.setup(entry.client, ctx), ROUND_TIMEOUT_MS)
    } catch (error) {
      entry.unavailable = reasonOf(error)
    }
  }
  for (let r = 0; r < scenario.rounds; r++) {
    for (let k = 0; k < entries.length; k++) {
      const entry = entries[(k + r) % entries.length] // rotate who goes first
      if (entry.unavailable) continue
      globalThis.gc?.()
      try {
        const result = await withTimeout(scenario.round(entry.state, entry.client, ctx), ROUND_TIMEOUT_MS)
        entry.rounds.push(result)
        log(
          `  ${ctx.pass} round ${r + 1}/${scenario.rounds} ${entry.client.label.padEnd(20)} ` +
            Object.entries(result)
              .map(([key, v]) => `${key}=${formatNumber(v)}`)
              .join(" "),
        )
      } catch (error) {
        entry.unavailable = reasonOf(error)
        log(`  ${ctx.pass} ${entry.client.label}: unavailable: ${entry.unavailable}`)
      }
    }
  }
  if (scenario.teardown) {
    for (const entry of entries) {
      if (entry.state === undefined) continue
      await withTimeout(scenario.teardown(entry.state), 60_000).catch(() => {})
    }
  }
  return { scenario, clients: entries.map(({ client, rounds, unavailable }) => ({ client, rounds, unavailable })) }
}

/** Prints the tables of every pass that ran (and writes --json), complete or not. */
function printReport(env, results, started) {
  const notes = new Notes()
  const minutes = (performance.now() - started) / 60000
  const out = [
    "",
    `machine:   ${env.machine}`,
    `versions:  ${env.versions}`,
    `addon:     ${env.addon}`,
    `load avg:  ${env.loadAverage} at start, ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")} at end; ${env.date}; ${minutes.toFixed(1)} min` + (scale !== 1 ? `; counts scaled by ${scale}` : ""),
  ]
  for (const pass of passes) {
    out.push(
      "",
      pass === "idle" ? "idle: nothing else started by the bench" : "loaded: a busy loop spinning on one core",
      "",
      passTable(results[pass], notes),
    )
  }
  out.push(
    "",
    "Figures are the median of the rounds ± half their range. Ratios are of medians. Over HTTP the floor is the",
    "server's own ceiling: a bare keep-alive request loop in Node (http.Agent).",
    ...notes.lines(),
  )
  console.log(out.join("\n"))
  if (flags.json) {
    const json = { environment: env, scale, passes: {} }
    for (const pass of passes) {
      json.passes[pass] = Object.fromEntries(
        results[pass].map(({ scenario, clients: entries }) => [
          scenario.id,
          Object.fromEntries(
            entries.map((e) => [e.client.label, e.unavailable ? { unavailable: e.unavailable } : e.rounds]),
          ),
        ]),
      )
    }
    writeFileSync(flags.json, JSON.stringify(json, null, 2))
  }
}

async function main() {
  const bin = refserverPath()
  const env = environment(bin)
  const all = scenarios({ bin, scale }).filter((s) => selected(s.id))
  if (all.length === 0) throw new Error(`--only ${flags.only}: no such scenario`)
  if (!globalThis.gc) log("note: run with --expose-gc for a GC between rounds")

  const clients = []
  for (const { kind, era } of CLIENTS) clients.push({ client: await makeClient(kind, era) })
  const http = all.some((s) => s.http) ? await startHttpServer(bin) : undefined
  const stdioEndpoint = { command: serverCommand(bin) }
  for (const entry of clients) {
    entry.unavailable = await preflight(entry.client, stdioEndpoint)
    if (http && !entry.unavailable) entry.httpUnavailable = await preflight(entry.client, { url: http.url })
  }

  const results = Object.fromEntries(passes.map((p) => [p, []]))
  const started = performance.now()
  // Ctrl-C prints what ran so far: a long run stopped early keeps its finished scenarios.
  process.once("SIGINT", () => {
    stopBusyLoop()
    log("\nstopped: the tables hold the scenarios that finished")
    printReport(env, results, started)
    process.exit(130)
  })
  try {
    for (const scenario of all) {
      for (const pass of passes) {
        log(`\n== ${scenario.title} (${pass})`)
        const usageOptions = { exclude: [] }
        if (pass === "loaded") usageOptions.exclude.push(startBusyLoop())
        const ctx = { pass, usageOptions, url: scenario.http ? http.url : undefined }
        const available = clients.map(({ client, unavailable, httpUnavailable }) => ({
          client,
          unavailable: unavailable ?? (scenario.http ? httpUnavailable : undefined),
        }))
        try {
          results[pass].push(await runPass(scenario, available, ctx))
        } finally {
          stopBusyLoop()
        }
      }
    }
  } finally {
    stopBusyLoop()
    await http?.close()
  }

  printReport(env, results, started)
  if (env.addon.includes("NOT")) log("\nwarning: the toolnexus addon is not a release build; run `npm run build` first")
}

await main()
// Sessions still open on an error must not keep the process alive.
process.exit(0)
