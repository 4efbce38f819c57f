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
  /**
   * For MCP tools: `server`, the configured server name, and `content` when the result
   * holds anything besides text (image, audio, resource_link, embedded resource): the
   * whole `content` array exactly as the server sent it, text parts included. A
   * text-only result has no `content`. Other keys may appear; any
   * `Record<string, unknown>` is accepted here.
   */
  metadata?: {
    server?: string
    content?: Array<{ type: string; [field: string]: unknown }>
    [key: string]: unknown
  }
}

/** Per-call options for {@link Tool.execute}. */
export interface ToolContext {
  /**
   * Aborts the call: it settles at once with an error result, an MCP server is told with
   * `notifications/cancelled`, and a response arriving later is dropped.
   */
  signal?: AbortSignal
  /**
   * Milliseconds for this call, overriding the server's `timeout`. Progress notifications
   * restart the clock; it stands still while `waitFor` is answering an elicitation.
   */
  timeout?: number
  answer?: Answer
  /**
   * Told of each progress notification the server sends for this call, in order. The
   * call carries a progress token either way; notifications arriving after the call
   * has settled are dropped.
   */
  onProgress?: (p: {
    /** Increases with every notification; may be fractional. */
    progress: number
    /** The value `progress` will reach, when the server knows it. */
    total?: number
    message?: string
  }) => void
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
    /**
     * Receives every `notifications/message` a server sends: the configured server
     * name, the level (`"debug"` ... `"emergency"`) and the data as sent. Without it,
     * `warning` and above print one stderr line naming the server; lower levels are dropped.
     */
    onLog?: (server: string, level: string, data: unknown) => void
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

// ---------------------------------------------------------------- store mode

/** Options of {@link createMcpStore}. Times are in milliseconds. */
export interface McpStoreOptions {
  /**
   * The longest `listToolsAsync()` waits for one local (stdio) server still `initializing`.
   * @default 5000
   */
  waitLocalMs?: number
  /**
   * The longest `listToolsAsync()` waits for one remote (HTTP) server still `initializing`.
   * @default 1500
   */
  waitRemoteMs?: number
  /** How many times a server that exited or dropped is restarted before it is `failed`. @default 5 */
  maxRestarts?: number
  /** The wait before the first restart; it doubles with each further one. @default 250 */
  backoffMs?: number
  /** The longest wait between two restarts. @default 10000 */
  backoffMaxMs?: number
}

/**
 * A tool as a store view lists it: the model of MCPStore's `ToolInfo`.
 * Entries are frozen and shared between calls while nothing changes.
 */
export interface StoreToolInfo {
  /**
   * `sanitize(serviceName) + "_" + sanitize(tool)`, where `tool` is the server's own name
   * for it. Unique within a view.
   */
  readonly name: string
  readonly description: string
  /** The server's input schema, with `type: "object"`. */
  readonly inputSchema: Readonly<JSONSchema>
  /**
   * The service as this view names it. In an agent view, the agent's own (local) name.
   * In the store view, a store-level service keeps its name and an agent's service is
   * `sanitize(local + "by" + agent)`, with `_2`, `_3`… appended when that name is taken.
   */
  readonly serviceName: string
  /** `"global_agent_store:<service>"` for a store-level service, `"<agent>:<local name>"` for an agent's. */
  readonly clientId: string
}

/** Lifecycle state of one service in a store. */
export type StoreServerState = "initializing" | "connected" | "reconnecting" | "failed" | "disabled"

/** What {@link McpStoreView.status} reports for one service. */
export interface StoreServerStatus {
  /**
   * `initializing` until the first connection and listing succeed; `connected`;
   * `reconnecting` after an exit or a dropped session, while restarts remain;
   * `failed` when it could not connect or ran out of restarts; `disabled` when the
   * config says so (nothing is spawned or dialled).
   */
  readonly state: StoreServerState
  /** The latest failure, when there was one. Never contains header or environment values. */
  readonly lastError?: string
  /** How many tools the service currently lists. */
  readonly toolCount: number
  /** When the current connection was established (ISO 8601). */
  readonly connectedAt?: string
  /** How many times the service was restarted or its session re-established. */
  readonly restarts: number
  /** As in {@link StoreToolInfo.clientId}. */
  readonly clientId: string
}

/** A {@link Tool} of a store view, with the service it belongs to. */
export interface StoreTool extends Tool {
  source: "mcp"
  /** As in {@link StoreToolInfo.serviceName}. */
  readonly serviceName: string
  /** As in {@link StoreToolInfo.clientId}. */
  readonly clientId: string
}

/**
 * One view of a store: {@link McpStore.forStore} (every service, under global names) or
 * {@link McpStore.forAgent} (one agent's services, under its local names). Listing answers
 * from memory; the cache is rebuilt only when the store's version changes.
 */
export interface McpStoreView {
  /** The agent of this view; `null` for the store view. */
  readonly agentId: string | null
  /**
   * The tools of this view as they are now, from memory: synchronous, no I/O, no waiting.
   * Services still `initializing` contribute nothing yet. The array is a fresh copy; its
   * entries are shared and frozen.
   */
  listTools(): StoreToolInfo[]
  /**
   * Like {@link listTools}, but first waits for the view's services still `initializing`,
   * each at most `waitLocalMs` (local) or `waitRemoteMs` (remote). Without any service
   * initializing it does not wait at all. An agent view waits only for its own services.
   */
  listToolsAsync(): Promise<StoreToolInfo[]>
  /** Executable handles for the tools of {@link listTools}, in the same order. */
  tools(): StoreTool[]
  /** {@link tools} after the same bounded wait as {@link listToolsAsync}. */
  toolsAsync(): Promise<StoreTool[]>
  /**
   * Runs the tool called `name` in this view. Never rejects: an unknown name, like any
   * failure, is an `isError` result. A call to a `reconnecting` service waits for it
   * within the call's timeout.
   */
  callTool(name: string, args?: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult>
  /** Every service of this view, keyed on its name in this view. Frozen; shared while nothing changes. */
  status(): Record<string, StoreServerStatus>
  /** Whether any service of this view is still `initializing`. */
  isInitializing(): boolean
  /** Resolves when no service of this view is `initializing`, or the wait bounds have run out. */
  waitReady(): Promise<void>
  /**
   * Adds the servers of an mcp.json (a path or a parsed object, as for
   * {@link parseMcpConfig}) to this view and starts connecting them in the background.
   * Throws when the config as a whole is unusable; a broken entry only fails its own service.
   * @returns this view, for chaining
   */
  addServers(config: string | object): this
  /** Stops the service named `name` (as this view names it), kills its process tree and forgets it. `false` when there is none. */
  removeServer(name: string): boolean
  /** Replaces the config entry of service `name` and reconnects it. */
  updateServer(name: string, entry: ServerConfig): this
  /**
   * Calls `listener` with the store's version after each change this view can see: tools
   * listed or unlisted (including `notifications/tools/list_changed`), a state change, a
   * service added or removed. The store view sees every change. Listener errors are ignored.
   * @returns a function that stops the listener
   */
  onChange(listener: (version: number) => void): () => void
}

/**
 * A long-lived set of MCP servers made by {@link createMcpStore}. It is itself the store
 * view ({@link McpStore.forStore} returns it).
 */
export interface McpStore extends McpStoreView {
  readonly agentId: null
  /** The change counter: it grows whenever any service's tools or state change. */
  readonly version: number
  /** The store view: every service, an agent's under its unique global name. */
  forStore(): McpStore
  /** The view of agent `id` (a non-empty string): only its services, under their local names. The same object for the same id. */
  forAgent(id: string): McpStoreView
  /** Ends every connection and kills every server process tree, agents' included. Idempotent. */
  close(): Promise<void>
}

/**
 * Creates a store of MCP servers and starts connecting every enabled server of `input`
 * (a path to an mcp.json, a parsed config object, or nothing for an empty store) in the
 * background. Returns at once. Throws when the config as a whole cannot be used.
 */
export function createMcpStore(input?: string | object | null, opts?: McpStoreOptions): McpStore

/** What {@link serveStoreApi} resolves. */
export interface StoreApiServer {
  /** The port actually bound (useful with `port: 0`). */
  readonly port: number
  readonly host: string
  /** `http://<host>:<port>`. */
  readonly url: string
  /**
   * The underlying `node:http` server, typed here by what it offers so that these types
   * need no `@types/node`; `api.server as import("node:http").Server` gives the full type.
   */
  readonly server: {
    address(): unknown
    close(callback?: (err?: Error) => void): unknown
    on(event: string, listener: (...args: any[]) => void): unknown
  }
  /** Stops listening and drops open connections. Idempotent. Does not close the store. */
  close(): Promise<void>
}

/**
 * Serves a store's tool listings as JSON in MCPStore's shape, for dashboards:
 * `GET /for_store/list_tools` and `GET /for_agent/:id/list_tools` answer
 * `{ success, data, metadata: { total_tools, services_count }, message }` where each
 * `data` entry is `{ name, description, service_name, client_id, inputSchema }`. Listing
 * uses the bounded wait of `listToolsAsync()`. Other paths answer 404 with `success: false`.
 */
export function serveStoreApi(
  store: McpStore,
  opts?: {
    /** @default 0 (any free port) */
    port?: number
    /** @default "127.0.0.1" */
    host?: string
  },
): Promise<StoreApiServer>

// Only the declarations marked `export` are public (ServerCommon stays internal).
export {}
