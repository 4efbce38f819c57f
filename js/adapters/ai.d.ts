import type { ToolSet } from "ai"

import type { SchemaProfile, StoreTool, Tool } from "../../index.d.ts"

export interface AiToolsOptions {
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
}

/**
 * Tools as an AI SDK `ToolSet` keyed by tool name: `generateText({ model, tools: aiTools(mcp.tools) })`.
 * The AI SDK's abort signal reaches each call; images and audio reach the model as file
 * parts; an error result is error text, never a throw.
 */
export function aiTools(tools: readonly (Tool | StoreTool)[], opts?: AiToolsOptions): ToolSet
