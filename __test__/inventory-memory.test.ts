// What a listed tool costs the host: a large inventory's JS objects stay small, as its
// schemas wait in the core as JSON text until read. Measured in a fresh Node with
// --expose-gc, so a full collection comes before each reading of the heap.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { assertCleanExit, fixture, NODE, runProcess } from "./helpers.js"

const TOOLS = 20_000
const server = { command: [NODE, fixture("many-tools.mjs"), `--count=${TOOLS}`], timeout: 60_000 }

/** JS heap bytes per tool that `loadMcp` or `listMcpTools` keeps, measured in a child. */
async function heapPerTool(call: "loadMcp" | "listMcpTools"): Promise<number> {
  const script = `
    import { loadMcp, listMcpTools } from "toolnexus"
    const config = { many: ${JSON.stringify(server)} }
    const heap = async () => {
      for (let i = 0; i < 3; i++) { gc(); await new Promise((r) => setTimeout(r, 20)) }
      return process.memoryUsage().heapUsed
    }
    await (await loadMcp({})).close()
    const before = await heap()
    const held = await ${call}(config)
    const after = await heap()
    const tools = held.tools.many ?? held.tools
    if (tools.length !== ${TOOLS}) throw new Error("listed " + tools.length + " tools")
    if (tools[${TOOLS - 1}].inputSchema.required[0] !== "id") throw new Error("schema lost")
    console.log(JSON.stringify((after - before) / tools.length))
    await held.close?.()`
  const run = await runProcess(["--expose-gc", "--input-type=module", "-e", script], { timeout: 120_000 })
  assertCleanExit(run)
  return Number(run.stdout.trim())
}

describe(`memory of a ${TOOLS}-tool inventory`, { timeout: 240_000 }, () => {
  // Each tool's name and description (about 100 bytes of text here) are JS strings;
  // what comes on top must stay a small multiple of that, not closures per tool.
  test("loadMcp keeps at most 700 bytes of JS heap per tool", async () => {
    const bytes = await heapPerTool("loadMcp")
    assert.ok(bytes < 700, `${Math.round(bytes)} bytes of JS heap per tool`)
  })

  test("listMcpTools keeps at most 400 bytes of JS heap per tool", async () => {
    const bytes = await heapPerTool("listMcpTools")
    assert.ok(bytes < 400, `${Math.round(bytes)} bytes of JS heap per tool`)
  })
})
