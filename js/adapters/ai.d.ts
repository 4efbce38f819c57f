import type { ToolSet } from "ai"

import type { SchemaProfile, StoreTool, Tool } from "../../index.d.ts"

export interface AiToolsOptions<T = Tool | StoreTool> {
  /**
   * The schema profile of the model's provider. Default: taken from `model.provider`
   * (`openai`, `anthropic`, `google`) when `model` is given, else `"portable"`.
   */
  profile?: SchemaProfile
  /** The model the tools are for; its provider picks the profile. */
  model?: { provider: string } | string
  /**
   * Characters of each result the model reads, else the server's `maxOutputChars`;
   * more is cut, with a marker saying how much.
   * @default 100000
   */
  maxOutputChars?: number
  /**
   * Tools the provider's own tool search loads on demand: `true` for every tool, or a
   * function picking them. Sets `providerOptions` `{ anthropic: { deferLoading: true },
   * openai: { deferLoading: true } }` on each; add the provider's search tool to the set
   * yourself (`anthropic.tools.toolSearchRegex_20251119()`, `openai.tools.toolSearch()`).
   * Default: the tools whose server entry says `deferLoading` (`metadata.deferLoading`).
   */
  defer?: boolean | ((tool: T) => boolean)
}

/**
 * Tools as an AI SDK `ToolSet` keyed by tool name: `generateText({ model, tools: aiTools(mcp.tools) })`.
 * The AI SDK's abort signal reaches each call; images and audio reach the model as file
 * parts; an error result is error text, never a throw.
 */
export function aiTools<T extends Tool | StoreTool>(tools: readonly T[], opts?: AiToolsOptions<T>): ToolSet
