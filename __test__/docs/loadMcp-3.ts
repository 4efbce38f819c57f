import assert from "node:assert"
import { loadMcp } from "toolnexus"

const waitFor = async (request: { prompt: string }) => ({ id: "a1", ok: true, data: { value: "approved" } })

const mcp = await loadMcp(
  {
    broken: { type: "local", command: ["node", "/no/such/script.mjs"] },
    off: { type: "remote", url: "https://example.com/mcp", disabled: true },
  },
  { waitFor, signal: AbortSignal.timeout(5_000) },
)

// The broken server is isolated as "failed" — parsing/loading the others is unaffected.
assert.equal(mcp.status.broken, "failed")
assert.equal(mcp.status.off, "disabled")
assert.deepEqual(mcp.tools, [])

await mcp.close()
console.log("ok:", JSON.stringify(mcp.status))
