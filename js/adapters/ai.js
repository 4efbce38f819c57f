// toolnexus/ai: Tools as an AI SDK ToolSet. Imports `ai` (an optional peer) only here.
import { jsonSchema } from "ai"

import { profiled } from "../provider-schema.js"
import { outputLimit, resultParts } from "./results.js"
import { deferral } from "./defer.js"
import { forModel } from "../visibility.js"

/** AI SDK provider ids (`model.provider`'s first segment) to schema profiles. */
const PROVIDER_PROFILES = {
  openai: "openai",
  azure: "openai",
  anthropic: "anthropic",
  google: "gemini",
  vertex: "gemini",
}

function profileFor(opts) {
  if (opts?.profile) return opts.profile
  const provider = typeof opts?.model === "object" ? String(opts.model?.provider ?? "").split(".")[0] : ""
  return PROVIDER_PROFILES[provider] ?? "portable"
}

export function aiTools(tools, opts) {
  const profile = profileFor(opts)
  const defer = deferral(opts)
  const set = {}
  // A tool only an app's view may see is no model's (MCP Apps' visibility rule).
  for (const tool of tools.filter(forModel)) {
    const made = profiled(tool, profile)
    const limit = outputLimit(tool, opts)
    set[tool.name] = {
      description: tool.description,
      inputSchema: jsonSchema(made.schema),
      ...(profile === "openai-strict" ? { strict: made.strict } : {}),
      // Each AI SDK provider reads only its own key, so both are set whatever the model.
      // Not the tool's own `deferLoading`: that is the AI SDK's client-side toolSearch().
      ...(defer?.(tool)
        ? { providerOptions: { anthropic: { deferLoading: true }, openai: { deferLoading: true } } }
        : {}),
      execute: (input, options) => tool.execute(made.restore(input), { signal: options?.abortSignal }),
      toModelOutput: ({ output }) => modelOutput(output, limit),
    }
  }
  return set
}

/** A ToolResult as AI SDK tool output: error text, text, or content parts for media. */
function modelOutput(result, limit) {
  const parts = resultParts(result, limit)
  if (result?.isError) return { type: "error-text", value: parts.map((p) => p.text).join("\n") }
  if (parts.every((p) => p.type === "text")) return { type: "text", value: parts.map((p) => p.text).join("\n") }
  return {
    type: "content",
    value: parts.map((p) =>
      p.type === "text"
        ? { type: "text", text: p.text }
        : { type: "file", data: { type: "data", data: p.data }, mediaType: p.mimeType },
    ),
  }
}
