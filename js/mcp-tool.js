// The Tool handle of an MCP server's tool, as loadMcp and the store both make it. Its own
// keys are the contract's: `name`, `description`, `inputSchema` (read when first used),
// the members beyond those the server listed, `source`, the source's own fields, and
// `execute`; `metadata` (the server and tool names as configured and listed, for hosts
// that display them: the `name` may be shortened) is not one of them.

/**
 * Returns `make(key, fields, origin)`, which makes one source's tools: `key` is what the
 * source knows the tool by; `fields` is `{ name, description, extra, own, execute }`
 * (`extra`: the listed members beyond the first three, handed to `members(tool, key,
 * extra)`; `own`: fields of the source's own); `origin` is the frozen `metadata`.
 * `schema(key)` reads the tool's `inputSchema`, which the source caches; with
 * `setSchema(key, value)` it can be assigned.
 *
 * A class of the source's own, so that its one accessor reaches the source's schemas and
 * what each tool keeps out of sight lives in private fields: defining hidden properties
 * one by one cost more than making the object (~2 µs a tool), and an inventory may list
 * a hundred thousand tools.
 */
export function mcpTools({ schema, setSchema, members }) {
  class McpTool {
    #key
    #origin
    /** Own and enumerable, so spreading or JSON.stringify of a tool sees it. */
    static #inputSchema = {
      get() {
        return schema(this.#key)
      },
      set:
        setSchema &&
        function (value) {
          setSchema(this.#key, value)
        },
      enumerable: true,
      configurable: true,
    }

    constructor(key, { name, description, extra, own, execute }, origin) {
      this.name = name
      this.description = description
      Object.defineProperty(this, "inputSchema", McpTool.#inputSchema)
      if (extra) members(this, key, extra)
      this.source = "mcp"
      if (own) Object.assign(this, own)
      this.execute = execute
      this.#key = key
      this.#origin = origin
    }

    /** The server and tool names as configured and listed. */
    get metadata() {
      return this.#origin
    }
  }
  return (key, fields, origin) => new McpTool(key, fields, origin)
}
