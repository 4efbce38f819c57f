import type { JSONSchema, StoreTool, Tool } from "../../index.d.ts"

export interface OpenAIToolsOptions<T = Tool | StoreTool> {
  /** Which API the tools are for. @default "responses" */
  api?: "chat" | "responses"
  /**
   * Strict mode (`strict: true`, schemas made with the `openai-strict` profile). A tool whose
   * schema strict mode cannot express is sent with `strict: false`. @default true
   */
  strict?: boolean
  /**
   * Responses only: tools OpenAI's tool search loads on demand (`defer_loading: true`),
   * `true` for every tool or a function picking them. When any is deferred, the
   * `tool_search` tool is added. With `api: "chat"` it throws (an entry's `deferLoading`
   * defers nothing there). Default: the tools whose server entry says `deferLoading`.
   */
  defer?: boolean | ((tool: T) => boolean)
}

export interface ChatFunctionTool {
  type: "function"
  function: { name: string; description: string; parameters: JSONSchema; strict: boolean }
}

export interface ResponsesFunctionTool {
  type: "function"
  name: string
  description: string
  parameters: JSONSchema
  strict: boolean
  /** Set for a tool `defer` picked: the model loads it only when tool search finds it. */
  defer_loading?: true
}

/** OpenAI's hosted tool search, added when at least one tool is deferred. */
export interface ResponsesToolSearchTool {
  type: "tool_search"
}

/** A Chat message's tool call; custom tool calls are left alone. */
export type ChatToolCall =
  | { id: string; type: "function"; function: { name: string; arguments: string } }
  | { id: string; type: "custom"; custom: unknown }

/** An item of a Responses `output`; only `function_call` items are run. */
export interface ResponsesOutputItem {
  type: string
  id?: unknown
  call_id?: unknown
  name?: unknown
  arguments?: unknown
}

export interface ChatToolMessage {
  role: "tool"
  tool_call_id: string
  content: string
}

export type ResponsesInputPart = { type: "input_text"; text: string } | { type: "input_image"; image_url: string }

export interface FunctionCallOutput {
  type: "function_call_output"
  call_id: string
  output: string | ResponsesInputPart[]
}

export interface RunOpenAIToolCallsOptions {
  /** As given to `openaiTools`: which schemas the model answered, so forced nulls are taken out. @default true */
  strict?: boolean
  /** Aborts every call. */
  signal?: AbortSignal
  /** Milliseconds each call may take. Default: the server's timeout. */
  timeout?: number
  /** Characters of each result the model reads, else the server's `maxOutputChars`. @default 100000 */
  maxOutputChars?: number
}

export function openaiTools<T extends Tool | StoreTool>(
  tools: readonly T[],
  opts: OpenAIToolsOptions<T> & { api: "chat"; defer?: false },
): ChatFunctionTool[]
export function openaiTools<T extends Tool | StoreTool>(
  tools: readonly T[],
  opts: OpenAIToolsOptions<T> & { defer: false },
): ResponsesFunctionTool[]
/** Responses tools, the deferred ones followed by the `tool_search` tool. */
export function openaiTools<T extends Tool | StoreTool>(
  tools: readonly T[],
  opts?: OpenAIToolsOptions<T> & { api?: "responses" },
): (ResponsesFunctionTool | ResponsesToolSearchTool)[]

/**
 * Runs a Chat message's `tool_calls` (resolving with `tool` messages) or the `function_call`
 * items of a Responses `output` array (resolving with `function_call_output` items; other
 * items are ignored), in parallel. Failures are outputs starting with `Error: `, never throws.
 */
export function runOpenAIToolCalls(
  tools: readonly (Tool | StoreTool)[],
  calls: readonly ChatToolCall[],
  opts?: RunOpenAIToolCallsOptions,
): Promise<ChatToolMessage[]>
export function runOpenAIToolCalls(
  tools: readonly (Tool | StoreTool)[],
  calls: readonly ResponsesOutputItem[],
  opts?: RunOpenAIToolCallsOptions,
): Promise<FunctionCallOutput[]>
