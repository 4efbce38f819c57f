// toolnexus/openai: Tools as OpenAI Chat Completions or Responses function tools, and a
// response's function calls run. Plain objects: nothing of `openai` is imported.
import { profiled } from "../provider-schema.js"
import { byName, outputLimit, parseArguments, refused, resultParts, textOnly } from "./results.js"
import { invalidArgument } from "../errors.js"
import { deferral } from "./defer.js"
import { appOnlyRefusal, forModel } from "../visibility.js"

const profileOf = (opts) => (opts?.strict === false ? "openai" : "openai-strict")

function api(opts) {
  const name = opts?.api ?? "responses"
  if (name !== "chat" && name !== "responses")
    throw invalidArgument(`api must be "chat" or "responses", got ${JSON.stringify(name)}`)
  return name
}

export function openaiTools(tools, opts) {
  const which = api(opts)
  const profile = profileOf(opts)
  const defer = deferral(opts)
  // OpenAI's tool search is a Responses tool; Chat Completions has no `defer_loading`, so
  // there an entry's `deferLoading` defers nothing, and asking for deferral is an error.
  if (which === "chat" && opts?.defer !== undefined && opts.defer !== false)
    throw invalidArgument('defer needs api: "responses" (tool search is a Responses tool)')
  const out = tools.filter(forModel).map((tool) => {
    const made = profiled(tool, profile)
    const fn = { name: tool.name, description: tool.description, parameters: made.schema, strict: made.strict }
    if (which === "chat") return { type: "function", function: fn }
    return { type: "function", ...fn, ...(defer?.(tool) ? { defer_loading: true } : {}) }
  })
  // The hosted tool search, run by OpenAI, finds the deferred tools.
  return out.some((tool) => tool.defer_loading) ? [...out, { type: "tool_search" }] : out
}

/**
 * Runs the function calls of a Chat message's `tool_calls` or of a Responses `output`
 * array (other items are ignored), all at once, and resolves with what to send back:
 * `tool` messages, or `function_call_output` items. A failure is an output, never a throw.
 */
export async function runOpenAIToolCalls(tools, calls, opts) {
  const named = byName(tools)
  const profile = profileOf(opts)
  const list = Array.isArray(calls) ? calls : []
  const chat = list.some((c) => c?.function !== undefined)
  const runs = list
    .filter((c) => (chat ? c?.type === undefined || c.type === "function" : c?.type === "function_call"))
    .map(async (call) => {
      const name = chat ? call.function?.name : call.name
      const tool = named.get(name)
      const result = await run(tool, name, chat ? call.function?.arguments : call.arguments, profile, opts)
      const parts = resultParts(result, outputLimit(tool, opts))
      if (chat) return { role: "tool", tool_call_id: call.id, content: errorText(result, textOnly(parts)) }
      return { type: "function_call_output", call_id: call.call_id, output: responsesOutput(result, parts) }
    })
  return Promise.all(runs)
}

async function run(tool, name, json, profile, opts) {
  if (tool === undefined) return refused(`no tool named ${JSON.stringify(name)}`, "TOOLNEXUS_UNKNOWN_TOOL")
  if (!forModel(tool)) return appOnlyRefusal(name)
  const { args, error } = parseArguments(json)
  if (error) return refused(error, "TOOLNEXUS_INVALID_ARGUMENT")
  return tool.execute(profiled(tool, profile).restore(args), { signal: opts?.signal, timeout: opts?.timeout })
}

// OpenAI's function outputs have no error flag: the text says it.
const errorText = (result, text) => (result.isError ? `Error: ${text}` : text)

function responsesOutput(result, parts) {
  if (result.isError || parts.every((p) => p.type === "text")) return errorText(result, textOnly(parts))
  return parts.map((p) =>
    p.type === "image"
      ? { type: "input_image", image_url: `data:${p.mimeType};base64,${p.data}` }
      : { type: "input_text", text: p.type === "text" ? p.text : textOnly([p]) },
  )
}
