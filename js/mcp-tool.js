// The Tool handles of MCP servers' tools, as loadMcp and a store view both make them from
// a listing (js/listed.js). A handle's own keys are the contract's: `name`,
// `description`, `inputSchema` (read when first used), the members beyond those the server
// listed, `source`, the entry point's own fields, and `execute`; `metadata` (the server and
// tool names as configured and listed, for hosts that display them: the `name` may be
// shortened) is not one of them.
import { runToolCall } from "./call.js"
import { Listed } from "./listed.js"

/**
 * A class, so that what each tool keeps out of sight lives in private fields: defining
 * hidden properties one by one cost more than making the object (~2 µs a tool), and an
 * inventory may list a hundred thousand tools.
 */
class McpTool extends Listed {
  #origin
  constructor(listing, i, execute, origin) {
    super(undefined, listing, i)
    this.name = listing.name(i)
    this.description = listing.description(i)
    listing.readsThrough(this, i)
    this.source = "mcp"
    const own = listing.own(i)
    if (own) Object.assign(this, own)
    this.execute = execute
    this.#origin = origin
  }

  /** The server and tool names as configured and listed. */
  get metadata() {
    return this.#origin
  }
}

/**
 * The handles of every tool of `listing`, frozen when it is. `calls` is the entry point's
 * call queue; `native` starts and aborts its calls (see `runToolCall`), by the key
 * `key(i)` gives tool number `i`.
 */
export function mcpTools(listing, { calls, native, key }) {
  const tools = new Array(listing.length)
  for (let i = 0; i < listing.length; i++) {
    const [at, metadata, target] = [key(i), listing.resultMetadata(i), listing.target(i)]
    const execute = (args, ctx) => runToolCall(calls, native, at, metadata, target, args, ctx)
    const tool = new McpTool(listing, i, execute, listing.origin(i))
    tools[i] = listing.frozen ? Object.freeze(tool) : tool
  }
  return tools
}
