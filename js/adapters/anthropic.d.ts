import type { JSONSchema, StoreTool, Tool } from "../../index.d.ts"

export interface AnthropicTool {
  name: string
  description: string
  input_schema: JSONSchema & { type: "object" }
  /** Set for a tool `defer` picked: Claude loads it only when the tool search tool finds it. */
  defer_loading?: true
}

/** Anthropic's server-side tool search tool, added when at least one tool is deferred. */
export type AnthropicToolSearchTool =
  | { type: "tool_search_tool_regex_20251119"; name: "tool_search_tool_regex" }
  | { type: "tool_search_tool_bm25_20251119"; name: "tool_search_tool_bm25" }

export interface AnthropicToolsOptions<T = Tool | StoreTool> {
  /**
   * Tools Claude's tool search loads on demand (`defer_loading: true`): `true` for every
   * tool, or a function picking them. When any is deferred, the tool search tool is added.
   * Default: the tools whose server entry says `deferLoading` (`metadata.deferLoading`).
   */
  defer?: boolean | ((tool: T) => boolean)
  /** The tool search tool added: `"regex"` (Claude writes regular expressions) or `"bm25"` (natural language). @default "regex" */
  search?: "regex" | "bm25"
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
export function anthropicTools<T extends Tool | StoreTool>(
  tools: readonly T[],
  opts: AnthropicToolsOptions<T> & { defer: false },
): AnthropicTool[]
/** Tools as Messages API `tools`, the deferred ones followed by the tool search tool. */
export function anthropicTools<T extends Tool | StoreTool>(
  tools: readonly T[],
  opts?: AnthropicToolsOptions<T>,
): (AnthropicTool | AnthropicToolSearchTool)[]

/**
 * Runs the `tool_use` blocks of a response's `content`, in parallel, and resolves with their
 * `tool_result` blocks in order: images as image blocks, failures with `is_error: true`.
 */
export function runAnthropicToolUses(
  tools: readonly (Tool | StoreTool)[],
  content: readonly { type: string; id?: string; name?: string; input?: unknown }[],
  opts?: RunAnthropicToolUsesOptions,
): Promise<ToolResultBlock[]>
