// toolnexus benchmarks: every scenario runs toolnexus, the official SDK client and the
// plain-Node floor against the same reference server, alternating rounds in one run.
//
//   node --expose-gc bench/run.mjs [--only sequential,throughput,...] [--scale 0.2]
//                                   [--json results.json]
//
// See bench/README.md for what each scenario measures.

import { execFileSync } from "node:child_process"
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { parseArgs } from "node:util"
import { CLIENT_NAMES, makeClient } from "./lib/clients.mjs"
import { refserverPath, repoRoot } from "./lib/refserver.mjs"
import { scenarios } from "./lib/scenarios.mjs"
import { formatNumber, median, summary, table } from "./lib/stats.mjs"

const { values: flags } = parseArgs({
  options: {
    only: { type: "string" },
    scale: { type: "string", default: "1" },
    json: { type: "string" },
  },
})
const scale = Number(flags.scale)
const only = flags.only?.split(",").map((s) => s.trim())
const log = (line) => process.stderr.write(`${line}\n`)

function tryRun(file, args) {
  try {
    return execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return undefined
  }
}

function addonInfo(dir) {
  const file = readdirSync(dir).find((f) => f.startsWith("toolnexus.") && f.endsWith(".node"))
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
  const sdkVersion = JSON.parse(
    readFileSync(path.join(repoRoot, "node_modules/@modelcontextprotocol/sdk/package.json"), "utf8"),
  ).version
  const ownVersion = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8")).version
  // The commit and working-tree state of this repository (the addon may come from elsewhere:
  // TOOLNEXUS_BENCH_PACKAGE; the addon line names its file and build time).
  const commit = tryRun("git", ["-C", repoRoot, "rev-parse", "--short", "HEAD"])
  const dirty = tryRun("git", ["-C", repoRoot, "status", "--porcelain", "--", "src", "index.js", "js"])
  const cpus = os.cpus()
  return {
    machine: `${cpus[0]?.model?.trim() ?? "unknown CPU"}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}`,
    versions: `Node ${process.version}, toolnexus ${ownVersion} (${commit ?? "?"}${dirty ? ", uncommitted changes" : ""}), @modelcontextprotocol/sdk ${sdkVersion}, ${tryRun("rustc", ["--version"]) ?? "rustc ?"}`,
    addon: addonInfo(pkgDir),
    refserver: bin,
    loadAverage: os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" "),
    date: new Date().toISOString(),
  }
}

function verdict(row, medians) {
  const { target } = row
  if (!target) return ["", ""]
  const [tn, sdk, floor] = medians
  const parts = []
  let ok = true
  if (target.ratio !== undefined) {
    const ratio = tn / sdk
    if (row.better === "lower") {
      parts.push(`≤ ${target.ratio}×`)
      ok &&= ratio <= target.ratio
    } else {
      parts.push(`≥ ${target.ratio}×`)
      ok &&= ratio >= target.ratio
    }
  }
  if (target.belowFloor) {
    parts.push("< floor")
    ok &&= tn < floor
  }
  if (target.atMost !== undefined) {
    parts.push(`≤ ${target.atMost} ${row.unit}`)
    ok &&= tn <= target.atMost
  }
  return [parts.join(", "), ok ? "yes" : "NO"]
}

async function main() {
  const bin = refserverPath()
  const env = environment(bin)
  const clients = []
  for (const name of CLIENT_NAMES) clients.push(await makeClient(name))
  const all = scenarios({ bin, scale }).filter((s) => !only || only.includes(s.id))
  const results = []
  const started = performance.now()
  if (!globalThis.gc) log("note: run with --expose-gc for a GC between rounds")

  for (const scenario of all) {
    log(`\n== ${scenario.title}`)
    const states = []
    for (const client of clients) states.push(scenario.setup ? await scenario.setup(client) : undefined)
    const rounds = clients.map(() => [])
    for (let r = 0; r < scenario.rounds; r++) {
      for (let k = 0; k < clients.length; k++) {
        const c = (k + r) % clients.length // rotate who goes first
        globalThis.gc?.()
        const result = await scenario.round(states[c], clients[c])
        rounds[c].push(result)
        log(
          `  round ${r + 1}/${scenario.rounds} ${clients[c].name.padEnd(9)} ` +
            Object.entries(result)
              .map(([k, v]) => `${k}=${formatNumber(v)}`)
              .join(" "),
        )
      }
    }
    if (scenario.teardown) for (const state of states) await scenario.teardown(state)
    results.push({ scenario, rounds })
  }

  const rows = []
  const json = { environment: env, scale, scenarios: {} }
  for (const { scenario, rounds } of results) {
    json.scenarios[scenario.id] = Object.fromEntries(clients.map((c, i) => [c.name, rounds[i]]))
    for (const row of scenario.rows) {
      const values = rounds.map((list) => list.map((r) => r[row.metric]))
      const medians = values.map(median)
      const [tn, sdk, floor] = medians
      rows.push([
        row.label,
        row.unit,
        summary(values[0]),
        summary(values[1]),
        summary(values[2]),
        row.noRatio ? "—" : `${formatNumber(tn / sdk)}×`,
        row.noRatio ? "—" : `${formatNumber(tn / floor)}×`,
        ...verdict(row, medians),
      ])
    }
  }
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
    "",
    table(rows, ["scenario", "unit", "toolnexus", "SDK", "floor", "tn/SDK", "tn/floor", "target (tn/SDK)", "met"]),
    "",
    "Figures are the median of the rounds ± half their range. Ratios are of medians.",
  ].join("\n")
  console.log(out)
  if (flags.json) writeFileSync(flags.json, JSON.stringify(json, null, 2))
  if (env.addon.includes("NOT")) log("\nwarning: the toolnexus addon is not a release build; run `npm run build` first")
}

await main()
// Sessions still open on an error must not keep the process alive.
process.exit(0)
