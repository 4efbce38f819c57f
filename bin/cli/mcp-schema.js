// `toolnexus schema`: the JSON Schema of mcp.json, as the package ships it.
import fs from "node:fs"

import { fail } from "./fail.js"

const usage = "usage: toolnexus schema"

const help = `${usage}

Prints the JSON Schema of mcp.json (the package's mcp.schema.json). Point an editor at it
with a "$schema" line at the top of the config:
  { "$schema": "./node_modules/toolnexus/mcp.schema.json", "mcpServers": { ... } }`

const options = { help: { type: "boolean", short: "h" } }

async function run(_values, positionals) {
  if (positionals.length > 0) return fail(usage)
  process.stdout.write(fs.readFileSync(new URL("../../mcp.schema.json", import.meta.url), "utf8"))
  return 0
}

export const schemaCommand = { usage, help, options, run }
