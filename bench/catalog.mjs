// Tool search and the persisted catalog:
// - search quality: the share of the test suite's queries (__test__/search/tools.mjs) whose
//   intended tool is in the top 5, over its catalog of 2,045 real and generated tools;
// - searchTools speed over more than 10,000 tools (the same catalog, grown), p50 and p99
//   per query, on a loadMcp source and on a store view, after the first query built the
//   index (that one is printed apart);
// - the index's memory against the schemas' own JSON text;
// - a store of 50 servers x 100 tools started from the catalog: the time from
//   createMcpStore to a listTools() that has every tool, in this process and as the first
//   store of a fresh one.
//
//   node bench/catalog.mjs [--rounds 20] [--servers 50] [--tools 100]
//
// Servers are the Rust reference server when it is built (cargo build --release -p
// toolnexus-refserver), else the search catalog's Node server.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs, promisify } from "node:util"
import * as native from "../binding.js"
import { createMcpStore, loadMcp } from "../index.js"
import { QUERIES } from "../__test__/search/tools.mjs"
import { refserverPath, serverCommand } from "./lib/refserver.mjs"
import { formatNumber, median, quantile, sorted } from "./lib/stats.mjs"

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "20" },
    servers: { type: "string", default: "50" },
    tools: { type: "string", default: "100" },
  },
})
const rounds = Number(flags.rounds)
const searchServer = (min) => ({
  command: [process.execPath, fileURLToPath(new URL("../__test__/search/server.mjs", import.meta.url)), String(min)],
})
const run = promisify(execFile)
const startScript = fileURLToPath(new URL("./lib/catalog-start.mjs", import.meta.url))
const µs = (ns) => `${formatNumber(Number(ns) / 1e3)} µs`
const print = (line) => process.stdout.write(`${line}\n`)

// ---------------------------------------------------------------- quality
{
  const source = await loadMcp({ all: searchServer(2_000) })
  const hits = QUERIES.filter(([query, tool]) =>
    source.searchTools(query, { limit: 5 }).some((t) => t.name === `all_${tool}`),
  ).length
  print(
    `search quality: intended tool in the top 5 for ${hits}/${QUERIES.length} queries (${((100 * hits) / QUERIES.length).toFixed(1)}%) over ${source.tools.length} tools`,
  )
  await source.close()
}

// ---------------------------------------------------------------- speed
/** p50 and p99 of `search(query)` over every query, `rounds` times, after a first build. */
function timeSearch(label, count, search) {
  const first = process.hrtime.bigint()
  search(QUERIES[0][0])
  const build = process.hrtime.bigint() - first
  const times = []
  for (let round = 0; round < rounds; round++) {
    for (const [query] of QUERIES) {
      const start = process.hrtime.bigint()
      search(query)
      times.push(process.hrtime.bigint() - start)
    }
  }
  const s = sorted(times.map(Number))
  print(
    `searchTools over ${count} tools (${label}): p50 ${µs(median(s))}, p99 ${µs(quantile(s, 0.99))}; first query (builds the index) ${µs(build)}`,
  )
}
{
  const source = await loadMcp({ all: searchServer(10_000) })
  timeSearch("loadMcp source", source.tools.length, (query) => source.searchTools(query, { limit: 10 }))
  await source.close()

  const store = createMcpStore({ all: searchServer(10_000) }, { catalog: false })
  await store.listToolsAsync()
  timeSearch("store view", store.listTools().length, (query) => store.searchTools(query, { limit: 10 }))
  await store.close()
}

// ---------------------------------------------------------------- memory
{
  const store = new native.NativeStore(
    { json: JSON.stringify({ all: searchServer(10_000) }) },
    { catalog: false },
    () => {},
    null,
    null,
  )
  await store.waitInitializing(null)
  const listing = store.listTools(null)
  const count = JSON.parse(listing.json()).tools.length / 3
  const schemaBytes = Buffer.byteLength(Array.from({ length: count }, (_, i) => listing.inputSchema(i)).join(""))
  const indexBytes = store.searchIndexBytes(null)
  print(
    `search index: ${formatNumber(indexBytes / 1e6)} MB for ${count} tools; their schemas' JSON text: ${formatNumber(schemaBytes / 1e6)} MB (index / schemas ${(indexBytes / schemaBytes).toFixed(2)})`,
  )
  await store.close()
}

// ---------------------------------------------------------------- startup from the catalog
{
  const servers = Number(flags.servers)
  const tools = Number(flags.tools)
  let command
  try {
    command = serverCommand(refserverPath(), { tools })
  } catch {
    command = searchServer(tools).command // grows past `tools`: the figure says how many
  }
  const config = Object.fromEntries(
    Array.from({ length: servers }, (_, i) => [`s${i}`, { command, env: { BENCH_SERVER: String(i) } }]),
  )
  const catalogDir = mkdtempSync(path.join(os.tmpdir(), "toolnexus-bench-catalog-"))
  const filling = createMcpStore(config, { catalogDir })
  await filling.listToolsAsync()
  const expected = filling.listTools().length
  for (let i = 0; i < 100 && readdirSync(catalogDir).filter((f) => f.endsWith(".json")).length < servers; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await filling.close()
  const times = []
  let listed = 0
  for (let round = 0; round < 5; round++) {
    const start = process.hrtime.bigint()
    const store = createMcpStore(config, { catalogDir })
    listed = store.listTools().length
    times.push(Number(process.hrtime.bigint() - start))
    await store.close()
  }
  const s = sorted(times)
  print(
    `store of ${servers} servers started from the catalog: ${listed}/${expected} tools listed by the first listTools(), ${formatNumber(median(s) / 1e6)} ms after createMcpStore (median of 5; max ${formatNumber(s.at(-1) / 1e6)} ms)`,
  )
  // The same as a host's first store: in a fresh process, nothing of it compiled or warm.
  const configDir = mkdtempSync(path.join(os.tmpdir(), "toolnexus-bench-config-"))
  const configPath = path.join(configDir, "mcp.json")
  writeFileSync(configPath, JSON.stringify(config))
  const fresh = []
  for (let round = 0; round < 5; round++) {
    const { stdout } = await run(process.execPath, [startScript, configPath, catalogDir])
    const { ns, listed } = JSON.parse(stdout)
    if (listed !== expected) throw new Error(`a fresh process listed ${listed} of ${expected} tools`)
    fresh.push(ns)
  }
  const f = sorted(fresh)
  print(
    `the same, as the first store of a fresh process: ${formatNumber(median(f) / 1e6)} ms (median of 5; max ${formatNumber(f.at(-1) / 1e6)} ms)`,
  )
  rmSync(catalogDir, { recursive: true, force: true })
  rmSync(configDir, { recursive: true, force: true })
}
