// Progressive discovery: instead of every tool's schema, a model gets three small tools
// that search the listing, show one tool's schema, and call a tool by name. They are
// ordinary Tools, so any framework adapter takes them as it takes the others.
import { createRequire } from "node:module"
import { defineTool } from "./define-tool.js"
import { invalidArgument } from "./errors.js"
import { appOnlyRefusal, forModel } from "./visibility.js"

/** Schema text above this many characters in all makes `auto` hand out the meta-tools. */
export const DEFAULT_MAX_SCHEMA_CHARS = 32_000
// The meta-tools' names, descriptions and schemas, which the gateway serves too.
const { defaultLimit: DEFAULT_LIMIT, tools: META_TOOLS } = createRequire(import.meta.url)("./meta-tools.json")
const [SEARCH, DESCRIBE, CALL] = META_TOOLS
const MAX_LIMIT = SEARCH.inputSchema.properties.limit.maximum

/** The first line of `text`, at most `max` characters. */
function oneLine(text, max = 160) {
  const line = String(text ?? "")
    .split("\n", 1)[0]
    .trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/**
 * The meta-tools over a listing. `search(query, limit)` returns Tools, best first;
 * `find(name)` returns the Tool of that name, if there is one; one only an app's view may
 * call is refused, naming the rule.
 */
export function metaTools({ search, find: findAny }) {
  const find = (name) => {
    const tool = findAny(name)
    return tool && !forModel(tool) ? { refused: appOnlyRefusal(name) } : tool
  }
  const unknown = (name) => ({
    output: `no tool named ${JSON.stringify(name)}; search_tools finds the names`,
    isError: true,
    metadata: { code: "TOOLNEXUS_UNKNOWN_TOOL" },
  })
  return [
    defineTool({
      ...SEARCH,
      run: ({ query, limit }) => {
        const n = Number.isInteger(limit) ? Math.min(Math.max(limit, 1), MAX_LIMIT) : DEFAULT_LIMIT
        const found = search(String(query ?? ""), n)
        if (found.length === 0) return `no tool matches ${JSON.stringify(String(query ?? ""))}`
        return JSON.stringify(found.map((t) => ({ name: t.name, description: oneLine(t.description) })))
      },
    }),
    defineTool({
      ...DESCRIBE,
      run: ({ name }) => {
        const tool = find(String(name ?? ""))
        if (!tool) return unknown(name)
        if (tool.refused) return tool.refused
        return JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })
      },
    }),
    defineTool({
      ...CALL,
      run: (args, ctx) => {
        const tool = find(String(args.name ?? ""))
        if (!tool) return unknown(args.name)
        if (tool.refused) return tool.refused
        return tool.execute(args.arguments ?? {}, ctx)
      },
    }),
  ]
}

/**
 * `modelTools(opts)` of a listing: its tools, or the meta-tools when `mode` is `"meta"`,
 * or when it is `"auto"` (the default) and the tools' names, descriptions and schemas
 * come to more than `maxSchemaChars` characters of JSON. `size()` measures the listing.
 */
export function chooseTools(opts, { tools, size, meta }) {
  const mode = opts?.mode ?? "auto"
  if (mode !== "auto" && mode !== "all" && mode !== "meta") {
    throw invalidArgument(`modelTools: mode must be "auto", "all" or "meta", got ${JSON.stringify(mode)}`)
  }
  const max = opts?.maxSchemaChars ?? DEFAULT_MAX_SCHEMA_CHARS
  if (typeof max !== "number" || !(max >= 0)) {
    throw invalidArgument(`modelTools: maxSchemaChars must be a non-negative number, got ${JSON.stringify(max)}`)
  }
  if (mode === "all" || (mode === "auto" && size() <= max)) return tools()
  return meta()
}

/** Validates `searchTools`' arguments; returns the limit. */
export function searchLimit(query, opts) {
  if (typeof query !== "string") throw invalidArgument("searchTools: query must be a string")
  const limit = opts?.limit ?? DEFAULT_LIMIT
  if (!Number.isInteger(limit) || limit < 0) {
    throw invalidArgument(`searchTools: limit must be a non-negative integer, got ${JSON.stringify(limit)}`)
  }
  return Math.min(limit, 0xffff_ffff)
}

/**
 * Gives a loaded source `searchTools`, `metaTools` and `modelTools` over its fixed `tools`;
 * `search(query, limit)` returns the indexes of the best matches. Not enumerable, so a
 * source's own keys stay the contract's.
 */
export function withSearch(source, search) {
  const { tools } = source
  let byName, meta, chars
  const named = () => new Map([...source.appTools, ...tools].map((tool) => [tool.name, tool]))
  const find = (name) => (byName ??= named()).get(name)
  const searchTools = (query, opts) => search(query, searchLimit(query, opts)).map((index) => tools[index])
  const methods = {
    searchTools,
    metaTools: () => (meta ??= metaTools({ search: (query, limit) => searchTools(query, { limit }), find })).slice(),
    modelTools: (opts) =>
      chooseTools(opts, {
        tools: () => tools.slice(),
        size: () =>
          (chars ??= tools.reduce(
            (n, t) => n + t.name.length + t.description.length + JSON.stringify(t.inputSchema).length,
            0,
          )),
        meta: () => methods.metaTools(),
      }),
  }
  for (const [key, value] of Object.entries(methods)) Object.defineProperty(source, key, { value })
  return source
}
