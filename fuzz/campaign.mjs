// Runs the fuzz targets until their coverage stops rising, then cuts each corpus back to
// at most 300 inputs, besides findings kept as regression inputs. Usage (after
// `cargo +nightly fuzz build`, from `fuzz/`):
//
//   nice -n 19 node campaign.mjs [--runs 300000] [--max 1800] [--parallel 2] [target ...]
//
// A target runs in segments of `--runs` executions, each starting from what the ones
// before found. A segment is counted in executions, not seconds, so that a loaded or
// paused machine cannot pass for a plateau. A target has plateaued when a segment adds
// under 0.5 % more edges (`cov`) and features (`ft`); it stops then, or after `--max`
// seconds. The corpus is then merged with
// `-set_cover_merge=1`, and a merge still over 300 inputs is cut greedily over the
// features the merge recorded per input. New inputs and the logs stay in `target/work/`.
import { spawn } from "node:child_process"
import { copyFileSync, createReadStream, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createInterface } from "node:readline"
import { join } from "node:path"
import { parseArgs } from "node:util"

const TARGETS = ["config", "stdio_lines", "sse", "jsonrpc", "oauth", "oauth_discovery", "tool_names", "env_file"]
const KEEP = 300
const PLATEAU = 0.005
/** What libFuzzer names the inputs it found a failure with. */
const FINDING = /^(crash|leak|timeout|oom|slow-unit)-/

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: "string", default: "300000" },
    max: { type: "string", default: "1800" },
    parallel: { type: "string", default: "2" },
  },
})
const runs = Number(values.runs)
const max = Number(values.max)
const targets = positionals.length ? positionals : TARGETS
const bin = (t) => join("target/x86_64-unknown-linux-gnu/release", t)
const work = (t, ...rest) => join("target/work", t, ...rest)

/** Runs the fuzzer once; resolves to its exit code and what it printed. */
function fuzzer(target, args) {
  return new Promise((resolve) => {
    const child = spawn(bin(target), args, { stdio: ["ignore", "ignore", "pipe"] })
    let log = ""
    child.stderr.on("data", (d) => (log += d))
    child.on("close", (code) => resolve({ code, log }))
  })
}

/** The last `#N ... cov: X ft: Y` line of a libFuzzer log. */
function lastStats(log) {
  const lines = [...log.matchAll(/^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)/gm)]
  const m = lines.at(-1)
  return m ? { execs: Number(m[1]), cov: Number(m[2]), ft: Number(m[3]) } : undefined
}

async function campaign(target) {
  for (const dir of ["new", "artifacts", "merged"]) mkdirSync(work(target, dir), { recursive: true })
  const segments = []
  const started = Date.now()
  const elapsed = () => Math.round((Date.now() - started) / 1000)
  let plateau = false
  while (!plateau && elapsed() < max) {
    const { code, log } = await fuzzer(target, [
      `-runs=${runs}`,
      `-max_total_time=${max - elapsed()}`,
      "-timeout=10",
      "-rss_limit_mb=2048",
      `-artifact_prefix=${work(target, "artifacts")}/`,
      work(target, "new"),
      join("corpus", target),
    ])
    const stats = lastStats(log)
    segments.push({ code, ...stats })
    const n = segments.length
    writeFileSync(work(target, `segment-${n}.log`), log)
    console.error(`${target} segment ${n}: exit ${code}, cov ${stats?.cov} ft ${stats?.ft}`)
    if (code !== 0 || !stats) break
    const before = segments[n - 2]
    // A segment the time cap cut short says nothing about a plateau.
    plateau =
      before !== undefined &&
      stats.execs >= runs &&
      stats.cov < before.cov * (1 + PLATEAU) &&
      stats.ft < before.ft * (1 + PLATEAU)
  }
  const findings = readdirSync(work(target, "artifacts"))
  return { target, segments, elapsed: elapsed(), plateau, findings, ...(await cut(target)) }
}

/** Merges what was found into the committed corpus and cuts it to at most KEEP inputs. */
async function cut(target) {
  const merged = work(target, "merged")
  const control = work(target, "merge.ctl")
  rmSync(merged, { recursive: true, force: true })
  // A control file left by an earlier merge would make libFuzzer skip the inputs it lists.
  rmSync(control, { force: true })
  mkdirSync(merged)
  const found = readdirSync(work(target, "new")).length + readdirSync(join("corpus", target)).length
  await fuzzer(target, [
    "-set_cover_merge=1",
    `-merge_control_file=${control}`,
    merged,
    work(target, "new"),
    join("corpus", target),
  ])
  // Staged first: some of the kept inputs are in the corpus folder being replaced.
  const staged = work(target, "kept")
  rmSync(staged, { recursive: true, force: true })
  mkdirSync(staged)
  const corpus = join("corpus", target)
  // Findings kept as regression inputs stay whatever the cover says of them.
  const findings = readdirSync(corpus).filter((name) => FINDING.test(name))
  const kept = [...new Set([...(await greedy(control)), ...findings.map((name) => join(corpus, name))])]
  for (const path of kept) copyFileSync(path, join(staged, path.split("/").at(-1)))
  rmSync(corpus, { recursive: true })
  mkdirSync(corpus)
  for (const name of readdirSync(staged)) copyFileSync(join(staged, name), join(corpus, name))
  const { log } = await fuzzer(target, ["-runs=0", corpus])
  const bytes = kept.reduce((sum, p) => sum + statSync(p).size, 0)
  return { found, merged: readdirSync(merged).length, kept: kept.length, keptStats: lastStats(log), bytes }
}

/**
 * The inputs to keep, at most KEEP: a greedy set cover over the features the merge
 * recorded per input (a set-cover merge records each input's whole set), each kept input
 * the one adding most features not yet covered, until none adds any. Lazily: an input's
 * gain only falls as others are kept, so only the best-looking one is counted again.
 */
async function greedy(control) {
  // Read line by line: a control file can outgrow the longest string Node can hold.
  const lines = createInterface({ input: createReadStream(control), crlfDelay: Infinity })
  let count
  let header = 0
  const paths = []
  const features = new Map()
  for await (const line of lines) {
    if (header < 2) {
      // The number of inputs, then how many of them were in the first folder.
      if (header++ === 0) count = Number(line)
    } else if (paths.length < count) {
      paths.push(line)
    } else {
      const m = /^FT (\d+)(.*)$/.exec(line)
      if (m) features.set(paths[Number(m[1])], Uint32Array.from(m[2].trim().split(" ").filter(Boolean), Number))
    }
  }
  // Ascending by the gain last counted, so the best-looking is last.
  const pending = [...features].map(([path, ft]) => ({ path, ft, gain: ft.length }))
  pending.sort((a, b) => a.gain - b.gain)
  const covered = new Set()
  const kept = []
  while (kept.length < KEEP && pending.length) {
    const top = pending.pop()
    top.gain = top.ft.reduce((n, f) => n + (covered.has(f) ? 0 : 1), 0)
    if (top.gain === 0) continue
    if (pending.length && top.gain < pending.at(-1).gain) {
      let lo = 0
      let hi = pending.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (pending[mid].gain < top.gain) lo = mid + 1
        else hi = mid
      }
      pending.splice(lo, 0, top)
      continue
    }
    for (const f of top.ft) covered.add(f)
    kept.push(top.path)
  }
  return kept
}

const queue = [...targets]
const results = []
await Promise.all(
  Array.from({ length: Number(values.parallel) }, async () => {
    while (queue.length) results.push(await campaign(queue.shift()))
  }),
)
console.log(JSON.stringify(results, null, 1))
