import type { JSONSchema, StoreTool, Tool } from "../../index.d.ts"

export interface AnthropicTool {
  name: string
  description: string
  input_schema: JSONSchema & { type: "object" }
}

export type ToolResultBlockContent =
  { type: "text"; text: string } | { type: "image"; source: { type: "base64"; media_type: string; data: string } }

export interface ToolResultBlock {
  type: "tool_result"
  tool_use_id: string
  content?: ToolResultBlockContent[]
  is_error?: true
}

export interface RunAnthropicToolUsesOptions {
  /** Aborts every call. */
  signal?: AbortSignal
  /** Milliseconds each call may take. Default: the server's timeout. */
  timeout?: number
  /** Characters of each result the model reads, else the server's `maxOutputChars`. @default 100000 */
  maxOutputChars?: number
}

/** Tools as Messages API `tools` (schemas made with the `anthropic` profile). */
export function anthropicTools(tools: readonly (Tool | StoreTool)[]): AnthropicTool[]

/**
 * Runs the `tool_use` blocks of a response's `content`, in parallel, and resolves with their
 * `tool_result` blocks in order: images as image blocks, failures with `is_error: true`.
 */
export function runAnthropicToolUses(
  tools: readonly (Tool | StoreTool)[],
  content: readonly { type: string; id?: string; name?: string; input?: unknown }[],
  opts?: RunAnthropicToolUsesOptions,
): Promise<ToolResultBlock[]>
