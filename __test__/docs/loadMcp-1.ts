import assert from "node:assert"
import { loadMcp } from "toolnexus"

const mcp = await loadMcp({
  search: { type: "remote", url: "https://example.com/mcp", enabled: false },
})

// Nothing connected — the disabled server contributes zero tools.
assert.deepEqual(mcp.tools, [])
assert.deepEqual(mcp.status, { search: "disabled" })

// close() is always safe to call, even with nothing to shut down.
await mcp.close()

console.log("ok:", JSON.stringify(mcp.status))
