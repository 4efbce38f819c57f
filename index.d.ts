// Public types of toolnexus. Hand-written: the native binding's generated typings
// stay internal, and this file is type-checked against the docs examples.

/** A JSON Schema object, as MCP servers send them. Unknown keywords are kept. */
export interface JSONSchema {
  type?: string | string[]
  properties?: Record<string, JSONSchema>
  required?: string[]
  [keyword: string]: unknown
}

/** Connection state of one configured server. */
export type McpStatus = "connected" | "disabled" | "failed"

/** What a tool call produced. It is never thrown: failures have `isError: true`. */
export interface ToolResult {
  output: string
  isError: boolean
  /** For MCP tools: `{ server }`, the configured server name. */
  metadata?: Record<string, unknown>
}

/** Per-call options for {@link Tool.execute}. */
export interface ToolContext {
  /** Aborts the call; an MCP server is told with `notifications/cancelled`. */
  signal?: AbortSignal
  /** Milliseconds for this call, overriding the server's `timeout`. Progress notifications restart the clock. */
  timeout?: number
  answer?: Answer
}

/** A callable tool, from an MCP server (`source: "mcp"`) or {@link defineTool} (`source: "native"`). */
export interface Tool {
  /** For MCP tools: `sanitize(server) + "_" + sanitize(tool)`. */
  name: string
  description: string
  inputSchema: JSONSchema
  source: "mcp" | "native" | (string & {})
  /** Runs the tool. Never rejects: transport failures, timeouts and aborts become `isError` results. */
  execute(args: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult>
}

/** A tool as its server lists it: original name, no prefix. */
export interface ToolInfo {
  name: string
  description: string
  inputSchema: JSONSchema
}

/** What {@link listMcpTools} found. */
export interface McpInventory {
  /** Per connected server, its unfiltered tools in listing order. Failed and disabled servers have no entry. */
  tools: Record<string, ToolInfo[]>
  /** An entry for every configured server, in config order. */
  status: Record<string, McpStatus>
}

/** Live connections made by {@link loadMcp}. */
export interface McpSource {
  /** Tools of every connected server, in config order, named `server_tool`. */
  tools: Tool[]
  /** An entry for every configured server, in config order. */
  status: Record<string, McpStatus>
  /** Ends every connection and kills every child process tree. Idempotent; always call it. */
  close(): Promise<void>
}

/** A question an MCP server asks the user mid-call (elicitation). */
export interface Request {
  /** Fresh and unique per request. */
  id: string
  /** `"input"` (form mode) or `"authorization"` (URL mode). */
  kind: string
  prompt: string
  url?: string
  /** Form mode: `{ schema: requestedSchema }`. */
  data?: Record<string, unknown>
  expiresAt?: string
}

/** The user's reply to a {@link Request}. */
export interface Answer {
  id: string
  ok: boolean
  /** The form content, when `ok`. */
  data?: Record<string, unknown>
  reason?: "declined" | "cancelled" | "expired"
}

/** Fields shared by local and remote server entries. */
interface ServerCommon {
  /** `false` skips the server: status `"disabled"`, nothing spawned or dialled. @default true */
  enabled?: boolean
  /** `true` skips the server, like `enabled: false`. @default false */
  disabled?: boolean
  /** Milliseconds allowed for each phase (spawn or dial, initialize, each tools/list page) and each call. @default 30000 */
  timeout?: number
  /**
   * Allowlist keyed on the server's original tool names, used by `loadMcp` only.
   * Any `true`: only those tools. Only `false`: every tool but those. Absent or empty: every tool.
   */
  tools?: Record<string, boolean>
}

/** A server run as a child process over stdio. */
export interface LocalServer extends ServerCommon {
  type?: "local"
  /** Program, then its arguments. Never run through a shell. */
  command: string[]
  /** Variables merged over the parent's environment. */
  environment?: Record<string, string>
  /** Alias of `environment`. */
  env?: Record<string, string>
  cwd?: string
  /** Absent on a local server; declared so `config.url` reads on any {@link ServerConfig} without narrowing. */
  url?: undefined
}

/** A server reached over streamable HTTP. */
export interface RemoteServer extends ServerCommon {
  type?: "remote"
  url: string
  /** Sent with every request; `${NAME}` in a value expands from the environment. Never printed. */
  headers?: Record<string, string>
  /** Absent on a remote server; declared so `config.command` reads on any {@link ServerConfig} without narrowing. */
  command?: undefined
}

export type ServerConfig = LocalServer | RemoteServer

/** Server name to entry: the map `parseMcpConfig` returns, unwrapped from `mcpServers`, `servers` or `mcp`. */
export type McpConfig = Record<string, ServerConfig>

/**
 * Reads an mcp.json: a path to a JSON file, or an already parsed object.
 * Throws when the file cannot be read or parsed, or the config is not an object.
 */
export function parseMcpConfig(input: string | object): McpConfig

/**
 * Connects to every enabled server in parallel and keeps the connections open.
 * One broken server never stops another: see `status`.
 */
export function loadMcp(
  input: string | object,
  opts?: {
    /** Answers elicitation requests. Omit it and the elicitation capability is not advertised. */
    waitFor?: (request: Request) => Promise<Answer>
    /** Bounds the whole load: when it fires, the promise rejects with its reason. */
    signal?: AbortSignal
  },
): Promise<McpSource>

/** Connects to every enabled server just long enough to list its tools, unfiltered, then disconnects. */
export function listMcpTools(
  input: string | object,
  opts?: {
    /** Bounds the whole listing: when it fires, the promise rejects with its reason. */
    signal?: AbortSignal
  },
): Promise<McpInventory>

/**
 * Wraps a plain function as a {@link Tool} with `source: "native"`.
 * `run` may return a string (the output), a {@link ToolResult} (kept as is) or any other
 * value (JSON-stringified; `undefined` gives `""`). A throw becomes `{ isError: true, output: message }`.
 */
export function defineTool<Args extends object = Record<string, any>>(def: {
  name: string
  description: string
  /** @default { type: "object", properties: {}, additionalProperties: false } */
  inputSchema?: JSONSchema
  run: (args: Args, ctx: ToolContext) => unknown
}): Tool

/**
 * Serves tools over MCP: `tools/list` and `tools/call`. Needs `@modelcontextprotocol/sdk`
 * installed; it is loaded on `connect`, never by importing toolnexus.
 */
export function buildMcpServer(
  tools: Tool[],
  cfg?: {
    /** `serverInfo.name`. @default "toolnexus" */
    name?: string
    /** `serverInfo.version`. @default the toolnexus package version */
    version?: string
    /** Serve only the tools with these names. @default every tool */
    tools?: string[]
  },
  /** Told of every call to a known tool. Its throws and rejections are ignored. */
  onCall?: (e: { name: string; source: string; ms: number; isError: boolean }) => void | Promise<void>,
): {
  /** Starts serving on an SDK server transport (`StdioServerTransport`, `StreamableHTTPServerTransport`). Once per server. */
  connect(transport: {
    start(): Promise<void>
    send(message: any, options?: any): Promise<void>
    close(): Promise<void>
  }): Promise<void>
  /** Closes the transport. Idempotent. */
  close(): Promise<void>
}

/** Replaces every character outside `[a-zA-Z0-9_-]` with `_`. */
export function sanitize(x: string): string

/** Expands `${NAME}` in header values from the environment. */
export function expandEnvHeaders(h: Record<string, string>): Record<string, string>
export function expandEnvHeaders(h?: undefined): undefined
export function expandEnvHeaders(h?: Record<string, string>): Record<string, string> | undefined

/** Maps `elicitation/create` params to a {@link Request}: form mode gives `kind: "input"`, URL mode `kind: "authorization"`. */
export function elicitationToRequest(params: Record<string, unknown>): Request

/** Maps an {@link Answer} to an elicitation result: `ok` accepts, `reason: "declined"` declines, anything else cancels. */
export function answerToElicitResult(answer: Answer): {
  action: "accept" | "decline" | "cancel"
  content?: Record<string, unknown>
}
// Only the declarations marked `export` are public (ServerCommon stays internal).
export {}
