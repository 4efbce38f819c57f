// Server names that JavaScript orders differently from the config: integer-like keys
// ("1", "42") come first in every object, whatever the order of the file.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { test } from "node:test"
import { listMcpTools } from "toolnexus"
import { local, tempDir, toolsFlag } from "./helpers.js"

const add = {
  name: "add",
  inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
}
const echo = { name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }
const ping = { name: "ping", inputSchema: { type: "object", properties: { host: { type: "string" } } } }

/** An mcp.json with "b" before "1", written as text: a JS object would reorder them. */
function configFile(dir: string): string {
  const file = path.join(dir, "mcp.json")
  const b = JSON.stringify(local(toolsFlag([add, ping])))
  const one = JSON.stringify(local(toolsFlag([echo])))
  fs.writeFileSync(file, `{"mcpServers": {"b": ${b}, "1": ${one}}}`)
  return file
}

test("listMcpTools gives every tool its own schema when names are integer-like", { timeout: 30_000 }, async (t) => {
  const inv = await listMcpTools(configFile(tempDir(t)))
  // JavaScript's order, as documented: integer-like names first.
  assert.deepEqual(Object.keys(inv.status), ["1", "b"])
  assert.deepEqual(Object.keys(inv.tools), ["1", "b"])
  const schemas = Object.fromEntries(
    Object.entries(inv.tools).flatMap(([server, tools]) =>
      tools.map((x) => [`${server}/${x.name}`, x.inputSchema.properties]),
    ),
  )
  assert.deepEqual(schemas, {
    "1/echo": echo.inputSchema.properties,
    "b/add": add.inputSchema.properties,
    "b/ping": ping.inputSchema.properties,
  })
})
