// toolnexus/anthropic: Tools as Anthropic Messages tools, and a response's tool_use blocks
// run. Plain objects: nothing of `@anthropic-ai/sdk` is imported.
import { profiled } from "../provider-schema.js"
import { byName, outputLimit, parseArguments, refused, resultParts, textOnly } from "./results.js"
import { deferral } from "./defer.js"
import { appOnlyRefusal, forModel } from "../visibility.js"
import { invalidArgument } from "../errors.js"

// Anthropic's server-side tool search tools, by the `search` option's names.
const SEARCH_TOOLS = {
  regex: { type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" },
  bm25: { type: "tool_search_tool_bm25_20251119", name: "tool_search_tool_bm25" },
}

export function anthropicTools(tools, opts) {
  const defer = deferral(opts)
  const search = opts?.search ?? "regex"
  if (!Object.hasOwn(SEARCH_TOOLS, search))
    throw invalidArgument(`search must be "regex" or "bm25", got ${JSON.stringify(search)}`)
  const out = tools.filter(forModel).map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: profiled(tool, "anthropic").schema,
    ...(defer?.(tool) ? { defer_loading: true } : {}),
  }))
  // A deferred tool is reachable only through the search tool, which itself is never deferred.
  return out.some((tool) => tool.defer_loading) ? [...out, { ...SEARCH_TOOLS[search] }] : out
}

/**
 * Runs the `tool_use` blocks of a response's `content`, all at once, and resolves with
 * their `tool_result` blocks, in order; a failure is `is_error: true`, never a throw.
 */
export async function runAnthropicToolUses(tools, content, opts) {
  const named = byName(tools)
  const uses = (Array.isArray(content) ? content : []).filter((block) => block?.type === "tool_use")
  return Promise.all(
    uses.map(async (use) => {
      const tool = named.get(use.name)
      const result = await run(tool, use, opts)
      const parts = resultParts(result, outputLimit(tool, opts))
      // Anthropic refuses empty text blocks.
      const blocks = parts.filter((p) => p.type !== "text" || p.text !== "").map(block)
      return {
        type: "tool_result",
        tool_use_id: use.id,
        ...(blocks.length > 0 ? { content: blocks } : {}),
        ...(result.isError ? { is_error: true } : {}),
      }
    }),
  )
}

async function run(tool, use, opts) {
  if (tool === undefined) return refused(`no tool named ${JSON.stringify(use.name)}`, "TOOLNEXUS_UNKNOWN_TOOL")
  if (!forModel(tool)) return appOnlyRefusal(use.name)
  const { args, error } = parseArguments(use.input)
  if (error) return refused(error, "TOOLNEXUS_INVALID_ARGUMENT")
  return tool.execute(args, { signal: opts?.signal, timeout: opts?.timeout })
}

function block(p) {
  if (p.type === "image") return { type: "image", source: { type: "base64", media_type: p.mimeType, data: p.data } }
  return { type: "text", text: p.type === "text" ? p.text : textOnly([p]) }
}
