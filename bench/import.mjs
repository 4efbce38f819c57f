// The cost of importing toolnexus: wall time of `await import(spec)` and the RSS growth it
// causes, each measured in a fresh Node process, median of `--runs` (default 15). Compares
// `toolnexus` alone with it plus each adapter subpath (which load their frameworks, `ai`
// for toolnexus/ai), so the figures show what adapters cost and that `toolnexus` pays none
// of it. TOOLNEXUS_BENCH_PACKAGE measures another build (a directory holding the package).
import { execFileSync } from "node:child_process"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = process.env.TOOLNEXUS_BENCH_PACKAGE ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "..")
const runsFlag = process.argv.indexOf("--runs")
const runs = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 15

const cases = [
  ["toolnexus", ["index.js"]],
  ["toolnexus + toolnexus/ai", ["index.js", "js/adapters/ai.js"]],
  ["toolnexus + toolnexus/openai", ["index.js", "js/adapters/openai.js"]],
  ["toolnexus + toolnexus/anthropic", ["index.js", "js/adapters/anthropic.js"]],
]

function once(files) {
  const urls = files.map((f) => pathToFileURL(path.join(root, f)).href)
  const script = `
    const before = process.memoryUsage().rss
    const start = performance.now()
    for (const url of ${JSON.stringify(urls)}) await import(url)
    const ms = performance.now() - start
    console.log(JSON.stringify({ ms, rss: process.memoryUsage().rss - before }))`
  return JSON.parse(
    execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }),
  )
}

const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]

console.log(`node ${process.version}, ${runs} runs each, medians; package: ${root}`)
console.log("| import | ms | RSS growth (MiB) |\n| --- | --- | --- |")
for (const [name, files] of cases) {
  try {
    const samples = Array.from({ length: runs }, () => once(files))
    const ms = median(samples.map((s) => s.ms)).toFixed(1)
    const mib = (median(samples.map((s) => s.rss)) / 2 ** 20).toFixed(1)
    console.log(`| ${name} | ${ms} | ${mib} |`)
  } catch (error) {
    console.log(`| ${name} | unavailable | ${String(error.message).split("\n")[0]} |`)
  }
}
