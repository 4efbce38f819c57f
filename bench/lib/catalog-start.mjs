// One store's start from a filled catalog, in a process of its own: prints the time from
// createMcpStore to a listTools() that has every tool, and how many it has, as JSON.
//   node bench/lib/catalog-start.mjs <config.json> <catalogDir>
import { readFileSync } from "node:fs"
import { createMcpStore } from "../../index.js"

const [configPath, catalogDir] = process.argv.slice(2)
const config = JSON.parse(readFileSync(configPath, "utf8"))
const start = process.hrtime.bigint()
const store = createMcpStore(config, { catalogDir })
const listed = store.listTools().length
const ns = Number(process.hrtime.bigint() - start)
await store.close()
process.stdout.write(JSON.stringify({ ns, listed }))
