// Public types of toolnexus. Hand-written: the native binding's generated typings
// stay internal, and this file is type-checked against the docs examples.

/** A JSON Schema object, as MCP servers send them. Unknown keywords are kept. */
export interface JSONSchema {
  type?: string | string[]
  properties?: Record<string, JSONSchema>
  required?: string[]
  [keyword: string]: unknown
}

/** A {@link JSONSchema} frozen all the way down: store views share theirs between calls. */
export interface FrozenJSONSchema {
  readonly type?: string | readonly string[]
  readonly properties?: { readonly [name: string]: FrozenJSONSchema }
  readonly required?: readonly string[]
  readonly [keyword: string]: unknown
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
   * text-only result has no `content`. `structuredContent`: a successful result's
   * structured content, as sent (checked against the tool's `outputSchema` when it has
   * one). Other keys may appear; any
   * `Record<string, unknown>` is accepted here. {@link buildMcpServer} serves `content`
   * and a `structuredContent` object again as the call's own.
   */
  metadata?: {
    server?: string
    /**
     * On an error result toolnexus composed itself (a timeout, an abort, an unknown tool,
     * ...), its {@link ErrorCode}; absent on a server's own error results.
     */
    code?: ErrorCode
    content?: Array<{ type: string; [field: string]: unknown }>
    structuredContent?: Record<string, unknown>
    [key: string]: unknown
  }
}

/**
 * The stable code of a failure: a rejection's `error.code`, or a composed error result's
 * `metadata.code`. The README's "Error codes" table says what each means and what to do.
 */
export type ErrorCode =
  | "TOOLNEXUS_TIMEOUT"
  | "TOOLNEXUS_ABORTED"
  | "TOOLNEXUS_CLOSED"
  | "TOOLNEXUS_SERVER_FAILED"
  | "TOOLNEXUS_UNKNOWN_SERVER"
  | "TOOLNEXUS_UNKNOWN_TOOL"
  | "TOOLNEXUS_SIGN_IN_REQUIRED"
  | "TOOLNEXUS_INVALID_CONFIG"
  | "TOOLNEXUS_INVALID_ARGUMENT"
  | "TOOLNEXUS_PROTOCOL"
  | "TOOLNEXUS_SERVER_ERROR"
  | "TOOLNEXUS_CONNECTION"
  | "TOOLNEXUS_UNSUPPORTED"
  | "TOOLNEXUS_INPUT_REQUIRED"
  | "TOOLNEXUS_OUTPUT_INVALID"
  | "TOOLNEXUS_OVERWHELMED"
  | "TOOLNEXUS_MISSING_DEPENDENCY"
  | "TOOLNEXUS_SKILL_REJECTED"
  | "TOOLNEXUS_UNKNOWN_SKILL"
  | "TOOLNEXUS_INTERNAL"

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
   * Capped at one year (`Infinity` included).
   */
  timeout?: number
  /**
   * Milliseconds this call may take in all, overriding the server's `maxTotalTimeout`:
   * progress does not restart it. Like `timeout`, it stands still while `waitFor` is
   * answering an elicitation of this call. @default none
   */
  maxTotalTimeout?: number
  /**
   * Call a tool whose `execution.taskSupport` is `"optional"` as a task: the server
   * answers with a task handle, polled at its `pollInterval` until the result, which
   * `execute` resolves with as a plain call's. `"required"` tools are always called as
   * tasks, `"forbidden"` ones (and tools that say nothing) never; a 2026-07-28 server
   * that declares the tasks extension decides for itself. While a task runs, `timeout`
   * bounds each poll and `maxTotalTimeout` the whole; `signal` cancels it on the server
   * (`tasks/cancel`). @default false
   */
  task?: boolean
  /**
   * Handed as it is to the `run` of a {@link defineTool} tool, which may use it. MCP tools
   * ignore it: what an MCP server asks mid-call is answered through `loadMcp`'s `waitFor`.
   */
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
  /**
   * For MCP tools: `sanitize(server) + "_" + sanitize(tool)` when that is at most 64
   * characters and no other tool of the same source (or store view) gets it; otherwise a
   * shortened name of at most 64 characters of `[a-zA-Z0-9_-]`, made unique and stable
   * with a hash of the original names (see "Tool names" in the README). Every LLM
   * provider accepts it.
   */
  name: string
  description: string
  inputSchema: JSONSchema
  source: "mcp" | "native" | (string & {})
  /**
   * MCP tools only: the configured server name (in a store view, the service as the view
   * names it) and the tool's name as its server lists it, for hosts that display them.
   * Frozen, and not enumerable: `Object.keys(tool)` and `JSON.stringify` leave it out.
   */
  readonly metadata?: {
    readonly server: string
    readonly tool: string
    readonly clientId?: string
    /** The server entry's `maxOutputChars`, when it has one: what the adapters hand a model of a result. */
    readonly maxOutputChars?: number
    /** `true` when the entry's `deferLoading` (less its `alwaysLoad`) leaves the tool to the provider's tool search. */
    readonly deferLoading?: true
  }
  /**
   * MCP Apps: `["app"]` on a tool whose `_meta.ui.visibility` does not name `"model"`, which
   * only an app's view may see and call. Such tools are in no list meant for a model
   * (`tools`, `searchTools`, `metaTools`, `modelTools`, the adapters), only in `appTools`;
   * the adapters and meta-tools refuse to pass them on or run them for a model.
   */
  visibility?: readonly ("model" | "app")[]
  /** Runs the tool. Never rejects: transport failures, timeouts and aborts become `isError` results. */
  execute(args: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult>
}

/** A tool as its server lists it: original name, no prefix. */
export interface ToolInfo {
  name: string
  description: string
  inputSchema: JSONSchema
  /** `["app"]` when only an app's view may see it (see {@link Tool.visibility}). */
  visibility?: readonly ("model" | "app")[]
}

/** What {@link listMcpTools} reports of one server, for doctors such as `toolnexus list`. */
export interface McpServerReport {
  status: McpStatus
  /** The protocol version spoken with the server: `"2026-07-28"`, or what it answered `initialize` with (connected servers). */
  protocolVersion?: string
  /** Milliseconds from starting it to its tools listed, or to its failure (absent when nothing was started). */
  connectMs?: number
  /** How many tools it listed (connected servers). */
  toolCount?: number
  /** Why it failed, in full. */
  error?: string
}

/** What {@link listMcpTools} found. */
export interface McpInventory {
  /**
   * Per connected server, its unfiltered tools in listing order. Failed and disabled
   * servers have no entry. Servers in config order, as JavaScript orders keys: see `status`.
   */
  tools: Record<string, ToolInfo[]>
  /**
   * An entry for every configured server, in config order, except that JavaScript puts
   * integer-like names (`"1"`, `"42"`) first, in ascending order, in every object.
   */
  status: Record<string, McpStatus>
  /**
   * An entry for every configured server, in config order: its status and what is known
   * of how it came up. Not enumerable: spreading the inventory or `JSON.stringify` leaves
   * it out, so the inventory's own keys stay `tools` and `status`.
   */
  readonly servers: Record<string, McpServerReport>
}

/** Live connections made by {@link loadMcp}. */
export interface McpSource {
  /** Tools of every connected server, in config order, named `server_tool`. */
  tools: Tool[]
  /** An entry for every configured server, in config order, integer-like names first (as in {@link McpInventory.status}). */
  status: Record<string, McpStatus>
  /** Ends every connection and kills every child process tree. Idempotent; always call it. */
  close(): Promise<void>
  /**
   * The tools only an app's view may see and call (MCP Apps' `_meta.ui.visibility`
   * without `"model"`), each with `visibility: ["app"]`; never in {@link tools}. Not
   * enumerable.
   */
  readonly appTools: Tool[]
  /**
   * The tools of {@link tools} that match `query` best, best first (BM25 over names split
   * on `_`, `-`, `.` and case, titles, descriptions and parameter names). Synchronous,
   * from memory; none when nothing matches.
   */
  searchTools(query: string, opts?: SearchOptions): Tool[]
  /** The meta-tools (`search_tools`, `describe_tool`, `call_tool`) over {@link tools}. */
  metaTools(): Tool[]
  /** {@link tools}, or {@link metaTools} when the listing is too large for a model: see {@link ModelToolsOptions}. */
  modelTools(opts?: ModelToolsOptions): Tool[]
}

/** Options of `searchTools`. */
export interface SearchOptions {
  /** At most this many tools. @default 10 */
  limit?: number
}

/** Options of `modelTools`. */
export interface ModelToolsOptions {
  /**
   * `"all"`: every tool. `"meta"`: the meta-tools only. `"auto"`: every tool, unless their
   * names, descriptions and schemas come to more than `maxSchemaChars` characters of JSON;
   * then the meta-tools. @default "auto"
   */
  mode?: "auto" | "all" | "meta"
  /** The size at which `"auto"` switches to the meta-tools. @default 32000 */
  maxSchemaChars?: number
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
  /**
   * When the question lapses (ISO 8601). toolnexus never sets it: MCP elicitation requests
   * carry no deadline, and a call's clock stands still while `waitFor` answers. Absent
   * means no deadline.
   */
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
  /** Milliseconds a call may take in all, however often progress restarts its `timeout`. @default none */
  maxTotalTimeout?: number
  /**
   * Which revision of MCP to speak. `"auto"` opens with 2026-07-28 (`server/discover`) and
   * falls back to the 2025-11-25 `initialize` handshake when the server shows it is older,
   * on the same process or URL; a version pins that one. @default "auto"
   */
  protocol?: "auto" | "2026-07-28" | "2025-11-25"
  /**
   * In a store, start the server only when a call, or a `listToolsAsync()` that has no
   * catalog to show for it, needs it; its state is `"lazy"` until then, and its tools come
   * from the catalog of its last listing. `loadMcp` and `listMcpTools` ignore it. @default false
   */
  lazy?: boolean
  /**
   * Allowlist keyed on the server's original tool names, used by `loadMcp` and a store.
   * Any `true`: only those tools. Only `false`: every tool but those. Absent or empty: every tool.
   */
  tools?: Record<string, boolean>
  /**
   * The adapters mark the server's tools `defer_loading`, for the provider's own tool search
   * to load on demand (`metadata.deferLoading`), unless their `defer` option says otherwise.
   * @default false
   */
  deferLoading?: boolean
  /** Tools of a `deferLoading` server, by the server's names, that are never deferred. */
  alwaysLoad?: string[]
}

/**
 * A server run as a child process over stdio. The command line is `command: [program,
 * ...arguments]`, or the Claude-desktop form `command: program` with optional `args` (a
 * program string with spaces and no `args` is refused: it reads as a shell line). Never run
 * through a shell. A program without `/` is looked up in `PATH`; a relative path is
 * relative to `cwd`, else to the host's working directory. `${VAR}` and `${VAR:-default}`
 * expand from the environment in `command`, `args`, `env` / `environment` values and `cwd`
 * when the config is read; a `${VAR}` without default whose variable is unset fails the
 * server, naming the variable.
 */
export type LocalServer = LocalServerEntry &
  (
    | {
        /** Program, then its arguments. */
        command: string[]
        args?: undefined
      }
    | {
        /** The program alone; its arguments are `args`. */
        command: string
        args?: string[]
      }
  )

/** What a {@link LocalServer} has besides its command line. */
interface LocalServerEntry extends ServerCommon {
  type?: "local" | "stdio"
  /** Variables set for the server, over its inherited environment. Wins over `env`. */
  environment?: Record<string, string>
  /** Alias of `environment`. */
  env?: Record<string, string>
  /**
   * A dotenv file (`KEY=VALUE` lines, `#` comments, quotes, `export `) whose variables are
   * set too; `env` and `environment` win over it. Relative to the config file, or to the
   * current directory for a config object.
   */
  envFile?: string
  /**
   * `false`: the server inherits only `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TERM`,
   * `LANG` and `LC_ALL` of the host's environment (the TypeScript SDK's safe set, plus the
   * locale), and gets its own variables. @default true (the whole environment)
   */
  inheritEnv?: boolean
  cwd?: string
  /** Absent on a local server; declared so `config.url` reads on any {@link ServerConfig} without narrowing. */
  url?: undefined
}

/**
 * A server reached over streamable HTTP, with a fallback to legacy HTTP+SSE. Every `type`
 * other MCP hosts write for one is accepted. `${VAR}` and `${VAR:-default}` expand in `url`
 * and `headers` values.
 */
export interface RemoteServer extends ServerCommon {
  type?: "remote" | "http" | "streamable-http" | "streamableHttp" | "sse"
  url: string
  /** Sent with every request; `${VAR}` in a value expands from the environment. Never printed. */
  headers?: Record<string, string>
  /**
   * Signing in when the server asks (the MCP authorization spec): `false` never does; an
   * object names the client. Default: sign in when asked, with a client registered
   * dynamically (or through `clientMetadataUrl` where the server supports it).
   */
  oauth?: false | OAuthClientConfig
  /** Absent on a remote server; declared so `config.command` reads on any {@link ServerConfig} without narrowing. */
  command?: undefined
  args?: undefined
}

export type ServerConfig = LocalServer | RemoteServer

/** The client a remote server is signed in to with. Strings expand `${VAR}`. */
export interface OAuthClientConfig {
  /** A client registered with the authorization server beforehand. */
  clientId?: string
  /** The secret of `clientId`, for a confidential client. Never printed. */
  clientSecret?: string
  /** Scopes to ask for instead of those the server suggests. */
  scopes?: string[]
  /** The port of the loopback listener (on 127.0.0.1) that receives the redirect. Default: a free one. */
  callbackPort?: number
  /** The HTTPS URL of this client's metadata document, used as its client id where supported. */
  clientMetadataUrl?: string
  /**
   * `"client_credentials"`: the client signs in as itself with `clientId` and
   * `clientSecret`, asking no person (headless agents); `"jwt-bearer"`: with the workload
   * identity token `assertion` (RFC 7523); `"enterprise"`: with a person's ID token from
   * `idp`, exchanged there for an ID-JAG (enterprise-managed authorization).
   * @default "authorization_code"
   */
  grantType?: "authorization_code" | "client_credentials" | "jwt-bearer" | "enterprise"
  /**
   * With `grantType: "client_credentials"`, instead of `clientSecret`: a PEM PKCS#8 private
   * key (P-256 or RSA) that signs a `private_key_jwt` assertion (ES256 or RS256). Never printed.
   */
  privateKey?: string
  /**
   * With `grantType: "jwt-bearer"`: the workload's identity token (a JWT its platform
   * issued: Kubernetes, CI, a cloud), or the file or variable it is read from, again for
   * every token request. Never printed.
   */
  assertion?: HeldCredential
  /** With `grantType: "enterprise"`: the company's identity provider. */
  idp?: {
    /** Where the ID token is exchanged (RFC 8693). */
    tokenEndpoint: string
    /** This client's id there. */
    clientId: string
    /** Its secret there, for a confidential client. Never printed. */
    clientSecret?: string
    /** The person's ID token from the IdP. Never printed. */
    idToken: HeldCredential
    /** @default the token endpoint's origin */
    issuer?: string
  }
  /**
   * Tokens bound to a key this client holds (DPoP, RFC 9449): `"auto"` when the
   * authorization server offers ES256 DPoP, `true` always (a server that does not offer
   * it fails the sign-in), `false` never.
   * @default "auto"
   */
  dpop?: "auto" | boolean
  /**
   * OAuth endpoints whose host resolves to a private, link-local, shared or cloud-metadata
   * address are refused before anything is sent; `true` allows them. Loopback is always
   * allowed.
   * @default false
   */
  allowPrivateNetwork?: boolean
}

/** A credential: the value, a file it is read from (relative to the config), or a variable. */
export type HeldCredential = string | { file: string } | { env: string }

/**
 * Where OAuth tokens rest, as opaque strings by key (one key per server URL). Each
 * method may return a value or a promise. Default: a file per server under
 * `$XDG_CONFIG_HOME/toolnexus/oauth/` (or `~/.config/toolnexus/oauth/`), mode 0600.
 */
export interface TokenStore {
  get(key: string): string | undefined | null | Promise<string | undefined | null>
  set(key: string, value: string): void | Promise<void>
  delete(key: string): void | Promise<void>
}

/** Signing in to servers that ask for it. */
export interface OAuthOptions {
  /**
   * Shows or opens `url`, the authorization URL, for a person. Resolve with the URL the
   * browser was redirected to (it carries `code`, `state` and `iss`), or with nothing when
   * the browser reaches toolnexus's own loopback listener, which then takes the redirect.
   * Without it, a server that needs a sign-in and has no usable stored token fails at
   * once, saying so (`toolnexus auth <name>` signs in from a terminal).
   */
  onAuthorize?: (url: URL) => Promise<string | URL | void>
  /** Where tokens rest. Default: the user's config directory. */
  tokenStore?: TokenStore
}

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
    /** Signing in to servers that ask for it. */
    oauth?: OAuthOptions
    /**
     * A fleet's shared state: its sign-ins (encrypted) are used, and each server's
     * listing is kept in its catalog. See {@link StateOption}.
     */
    state?: StateOption
  },
): Promise<McpSource>

/** Connects to every enabled server just long enough to list its tools, unfiltered, then disconnects. */
export function listMcpTools(
  input: string | object,
  opts?: {
    /** Bounds the whole listing: when it fires, the promise rejects with its reason. */
    signal?: AbortSignal
    /** Signing in to servers that ask for it. */
    oauth?: OAuthOptions
    /** A fleet's shared state, whose sign-ins (encrypted) it uses. See {@link StateOption}. */
    state?: StateOption
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
  tools: ReadonlyArray<Tool | StoreTool>,
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

/** Expands `${NAME}` (and `${NAME:-default}`) in header values from the environment; an unset variable without default is empty. */
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

/** Options of {@link createMcpStore}. Times are finite milliseconds, capped at one year. */
export interface McpStoreOptions {
  /** Signing in to servers that ask for it. */
  oauth?: OAuthOptions
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
  /** Every server lazy, as if each entry said `"lazy": true`. @default false */
  lazy?: boolean
  /**
   * Keep each server's last listing on disk and show it while the server connects (never
   * for a call). `false` keeps none. @default true
   */
  catalog?: boolean
  /** The catalog's folder. @default `$XDG_CACHE_HOME/toolnexus/catalog`, else the platform's cache folder's `toolnexus/catalog` */
  catalogDir?: string
  /**
   * A fleet's shared state: every store on the same state and namespace shares its
   * registry (servers added or removed at run time), catalog, sign-ins and news of tool
   * list changes. Without it the store keeps its catalog and tokens in this host's files.
   */
  state?: StateOption
  /**
   * Tell the servers that questions asked mid-call (elicitation) will be answered: each
   * goes to whoever made the call when that caller can answer (a client of
   * {@link serveMcp}), and is answered `cancel` otherwise. `toolnexus serve` sets it.
   * @default false
   */
  elicitation?: boolean
}

// ---------------------------------------------------------------- shared state

/**
 * Where a fleet keeps what it shares: a Redis or Valkey URL (`redis://`, `rediss://` for
 * TLS, with user, password and database: `redis://user:pass@host:6379/2`), the same with
 * options, or a {@link StateStore} of your own.
 */
export type StateOption = string | StateConfig | StateStore

export interface StateConfig {
  /** A Redis or Valkey URL, as {@link StateOption} says. Give `url` or `store`. */
  url?: string
  /** A state store of your own instead of Redis. */
  store?: StateStore
  /** Every key lives under `toolnexus:<namespace>:`; namespaces never see each other. @default "default" */
  namespace?: string
  /**
   * The key sign-ins are encrypted with (AES-256-GCM): 64 hex digits. Without one,
   * sign-ins stay in this host's token store and the store says so once, at start.
   * @default process.env.TOOLNEXUS_STATE_KEY
   */
  key?: string
}

/**
 * A key-value store with expiry, compare-and-set and publish/subscribe: what a fleet
 * needs of a database. Keys and values are strings; a value read back may be anything
 * (another program's, corrupt, foreign): toolnexus checks it. Every method may reject;
 * a rejection marks the state unavailable until a later call succeeds.
 */
export interface StateStore {
  /** The value of `key`, or `null` when there is none (or it expired). */
  get(key: string): Promise<string | null | undefined>
  /** Sets `key`, to expire after `ttlMs` milliseconds when given. */
  set(key: string, value: string, ttlMs?: number): Promise<void>
  delete(key: string): Promise<void>
  /**
   * Atomically: when `key`'s value is `expected` (`null`: when it has none), sets it to
   * `value` (`null`: deletes it), to expire after `ttlMs` when given, and resolves `true`;
   * otherwise changes nothing and resolves `false`.
   */
  compareAndSet(key: string, expected: string | null, value: string | null, ttlMs?: number): Promise<boolean>
  /** Sends `message` to every subscriber of `channel`, in any process. */
  publish(channel: string, message: string): Promise<void>
  /** Calls `onMessage` for each message published to `channel`; resolves a function that stops it. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => void | Promise<void>>
}

/** What {@link McpStore.sharedState} answers. */
export interface SharedStateStatus {
  /**
   * `connected` while the shared state answers; `unavailable` while it does not (the
   * store works on from memory and its files, keeps what it must write, and reconnects);
   * `local` when the store has no shared state (files only).
   */
  readonly status: "connected" | "unavailable" | "local"
  /** Why it is unavailable, or why sign-ins are not shared. */
  readonly reason?: string
  /** The namespace, when there is a shared state. */
  readonly namespace?: string
  /** Whether sign-ins are shared (a key was given). */
  readonly signIns?: boolean
}

/** One live store instance of a fleet, as {@link McpStore.instances} lists them. */
export interface FleetInstance {
  readonly id: string
  readonly host: string
  readonly pid: number
  /** Each of its services (store-view names) and its state. */
  readonly servers: Record<string, StoreServerState>
  /** When it last said it was alive (ISO 8601). */
  readonly seenAt: string
}

/**
 * A tool as a store view lists it: the model of MCPStore's `ToolInfo`.
 * Entries are frozen and shared between calls while nothing changes.
 */
export interface StoreToolInfo {
  /**
   * `sanitize(serviceName) + "_" + sanitize(tool)`, where `tool` is the server's own name
   * for it, when that fits in 64 characters and is unique within the view; otherwise
   * shortened and hashed as {@link Tool.name} says. Unique within a view.
   */
  readonly name: string
  readonly description: string
  /** The server's input schema, with `type: "object"`. Parsed when first read; frozen. */
  readonly inputSchema: FrozenJSONSchema
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
export type StoreServerState =
  "lazy" | "initializing" | "connected" | "reconnecting" | "failed" | "needs_auth" | "disabled"

/** What {@link McpStoreView.status} reports for one service. */
export interface StoreServerStatus {
  /**
   * `lazy` while a lazy server waits for its first call; `initializing` until the first
   * connection and listing succeed (its tools meanwhile those of the catalog); `connected`;
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
  /** The protocol version spoken with the server (`"2026-07-28"`, or what it answered `initialize` with), while it is connected. */
  readonly protocolVersion?: string
}

/**
 * A {@link Tool} of a store view, with the service it belongs to. Its schema is the frozen
 * one of its {@link StoreToolInfo}; {@link buildMcpServer} serves it like any tool.
 */
export interface StoreTool extends Omit<Tool, "inputSchema"> {
  readonly inputSchema: FrozenJSONSchema
  source: "mcp"
  /** As in {@link StoreToolInfo.serviceName}. */
  readonly serviceName: string
  /** As in {@link StoreToolInfo.clientId}. */
  readonly clientId: string
}

/**
 * One view of a store: {@link McpStore.forStore} (every service, under global names) or
 * {@link McpStore.forAgent} (one agent's services, under its local names). Listing answers
 * from memory; the cache is rebuilt only when something this view shows changed.
 */
export interface McpStoreView {
  /** The agent of this view; `null` for the store view. */
  readonly agentId: string | null
  /**
   * The tools of this view as they are now, from memory: synchronous, no I/O, no waiting.
   * Services still `initializing` (or `lazy`) contribute the tools of their last listing
   * from the catalog, else nothing yet. The array is a fresh copy; its
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
   * Handles for the view's tools only an app's view may see and call (MCP Apps'
   * `_meta.ui.visibility` without `"model"`), each with `visibility: ["app"]`: in neither
   * {@link listTools} nor {@link tools}. {@link callTool} runs them too.
   */
  appTools(): StoreTool[]
  /**
   * Runs the tool called `name` in this view. Never rejects: an unknown name, like any
   * failure, is an `isError` result. A call to a `reconnecting` service waits for it
   * within the call's timeout.
   */
  callTool(name: string, args?: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult>
  /**
   * Every service of this view, keyed on its name in this view, in the view's order (the
   * order services were added), except that JavaScript puts integer-like names first.
   * Frozen; shared while nothing in this view changes.
   */
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
  /**
   * The tools of {@link tools} that match `query` best, best first (BM25 over names split
   * on `_`, `-`, `.` and case, titles, descriptions and parameter names). Synchronous,
   * from memory, never starts a server; none when nothing matches.
   */
  searchTools(query: string, opts?: SearchOptions): StoreTool[]
  /**
   * The meta-tools over this view, ordinary {@link Tool}s to hand a model: `search_tools`
   * (names and one-line descriptions), `describe_tool` (one tool's full schema) and
   * `call_tool` (runs a tool by name). They follow the view as it changes.
   */
  metaTools(): Tool[]
  /** {@link tools}, or {@link metaTools} when the listing is too large for a model: see {@link ModelToolsOptions}. */
  modelTools(opts?: ModelToolsOptions): Tool[]
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
  /** Whether the shared state (`opts.state`) answers, and why not. */
  sharedState(): SharedStateStatus
  /** The live instances on this store's shared state, this one included; only this one without a shared state. */
  instances(): Promise<FleetInstance[]>
}

/**
 * Creates a store of MCP servers and starts connecting every enabled server of `input`
 * (a path to an mcp.json, a parsed config object, or nothing for an empty store) in the
 * background. Returns at once. Throws when the config as a whole cannot be used.
 */
export function createMcpStore(input?: string | object | null, opts?: McpStoreOptions): McpStore

/** Options of {@link serveMcp}. */
export interface ServeMcpOptions {
  /** `host:port` to listen on over streamable HTTP; port 0 picks a free one. @default "127.0.0.1:0" */
  http?: string
  /** Serve on this process's stdin and stdout instead of over HTTP. @default false */
  stdio?: boolean
  /** Serve the view's meta-tools (`search_tools`, `describe_tool`, `call_tool`) instead of its tools. @default false */
  meta?: boolean
  /** The server name downstream clients see. @default "toolnexus" */
  name?: string
  /** Browser origins (`scheme://host:port`) allowed besides loopback pages; any other `Origin` gets 403. */
  allowedOrigins?: string[]
  /**
   * The front door, one of two kinds. `tokens`: the bearer tokens that open each path
   * (`/mcp`, `/agents/<id>/mcp`); values may be `${VAR}`. With tokens set, a path without
   * any is closed. `oauth`: take an authorization server's JWT access tokens instead.
   */
  auth?: { tokens?: Record<string, string | string[]>; oauth?: ServeOAuthOptions }
}

/** The gateway as an OAuth resource server (RFC 9728 metadata at `/.well-known/oauth-protected-resource`). */
export interface ServeOAuthOptions {
  /** The authorization server's issuer; tokens' `iss` must equal it. */
  issuer: string
  /** Its JWK set; by default read from its metadata (RFC 8414, then OpenID discovery). */
  jwksUri?: string
  /** This resource's identifier, which tokens' `aud` must name. @default the gateway's origin, `http://host:port` */
  resource?: string
  /** The scopes that open each path (any one of them); a path not listed opens to every valid token. */
  scopes?: Record<string, string | string[]>
}

/** A running gateway, made by {@link serveMcp}. */
export interface McpGateway {
  /** `http://host:port/mcp`; `undefined` over stdio. */
  readonly url: string | undefined
  /** Resolves once the gateway has stopped: closed, or its stdio client gone. */
  readonly ended: Promise<void>
  /** Stops serving: no new connections; every downstream session and stream ends. The store stays open. */
  close(): Promise<void>
}

/**
 * Serves a store view as one MCP server, to clients of either protocol era, over streamable
 * HTTP or stdio. Over HTTP, `/mcp` serves `view`; when `view` is the store itself,
 * `/agents/<id>/mcp` serves each agent's view. Tools keep the names the view gives them and
 * every member their servers sent; calls pass progress and cancellation both ways;
 * resources, templates, prompts and completions pass through; list changes are pushed.
 */
export function serveMcp(view: McpStoreView, opts?: ServeMcpOptions): Promise<McpGateway>

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
    /** An empty string is the default too. @default "127.0.0.1" */
    host?: string
  },
): Promise<StoreApiServer>

// ---- What a server offers beyond tool names (tool members, resources, prompts) ----

/** Hints about a tool's behaviour, as the server sent them; none of them is a guarantee. */
export interface ToolAnnotations {
  /** A human-readable title (`Tool.title` takes precedence). */
  title?: string
  /** The tool does not modify its environment. @default false */
  readOnlyHint?: boolean
  /** It may perform destructive updates (meaningful when not read-only). @default true */
  destructiveHint?: boolean
  /** Calling it again with the same arguments has no further effect. @default false */
  idempotentHint?: boolean
  /** It may interact with an open world of external entities. @default true */
  openWorldHint?: boolean
  [key: string]: unknown
}

/** An icon a server offers for a tool, resource or prompt. */
export interface Icon {
  src: string
  mimeType?: string
  sizes?: string[]
  theme?: "light" | "dark"
  [key: string]: unknown
}

/** How a tool may be run: `taskSupport` says whether it can (or must) run as a task. */
export interface ToolExecution {
  /** @default "forbidden" */
  taskSupport?: "forbidden" | "optional" | "required"
  [key: string]: unknown
}

/**
 * The optional members of an MCP tool beyond name, description and input schema, with the
 * specification's names and values exactly as the server listed them. A member the server
 * did not send is absent (not `undefined`): `Object.keys` of a tool without them is what
 * it always was. Each is parsed when first read.
 */
export interface McpToolMembers {
  /** A display name. */
  title?: string
  annotations?: ToolAnnotations
  /**
   * The JSON Schema of the tool's `structuredContent`. Every result is checked against it,
   * as the official client does: a result that does not match, or a successful one with
   * no structured content, is an `isError` result naming the server, the tool and the
   * first violation.
   */
  outputSchema?: JSONSchema
  icons?: Icon[]
  execution?: ToolExecution
  /** The tool's `_meta`, e.g. an MCP Apps view: `_meta.ui.resourceUri` (`ui://...`). */
  _meta?: Record<string, unknown>
}

// Declaration merging: MCP tools and listings carry these members when the server sent them.
export interface Tool extends McpToolMembers {}
export interface ToolInfo extends McpToolMembers {}
export interface StoreToolInfo extends Readonly<McpToolMembers> {}

/** A resource as its server lists it, with the configured name of that server. */
export interface ResourceInfo {
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  size?: number
  icons?: Icon[]
  annotations?: Record<string, unknown>
  _meta?: Record<string, unknown>
  /** The configured server name (in a store view, the view's name for it). */
  server: string
  [key: string]: unknown
}

/** A resource template (RFC 6570 `uriTemplate`) as its server lists it. */
export interface ResourceTemplateInfo {
  uriTemplate: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  icons?: Icon[]
  annotations?: Record<string, unknown>
  _meta?: Record<string, unknown>
  /** As in {@link ResourceInfo.server}. */
  server: string
  [key: string]: unknown
}

/** One item of a resource's contents: `text`, or `blob` (base64), exactly as sent. */
export interface ResourceContents {
  uri: string
  mimeType?: string
  text?: string
  blob?: string
  _meta?: Record<string, unknown>
  [key: string]: unknown
}

/** A prompt argument as its server declares it. */
export interface PromptArgument {
  name: string
  title?: string
  description?: string
  required?: boolean
  [key: string]: unknown
}

/** A prompt as its server lists it. */
export interface PromptInfo {
  name: string
  title?: string
  description?: string
  arguments?: PromptArgument[]
  icons?: Icon[]
  _meta?: Record<string, unknown>
  /** As in {@link ResourceInfo.server}. */
  server: string
  [key: string]: unknown
}

/** A message of a prompt, as the server sent it. */
export interface PromptMessage {
  role: "user" | "assistant"
  content: { type: string; [field: string]: unknown }
}

/**
 * One `notifications/resources/updated`, as {@link McpOffers.subscribeResource} hands it
 * over: the notification's params as the server sent them (the SDK's names) with the
 * `server` they came from. It says the resource changed; read it again for its contents.
 */
export interface ResourceUpdate {
  /** As in {@link ResourceInfo.server}. */
  server: string
  /** The resource that changed. */
  uri: string
  /** As the server sent it (the 2026-07-28 stream's own subscription id left out). */
  _meta?: Record<string, unknown>
  [key: string]: unknown
}

/** What `completion/complete` completes: a prompt's argument, or a resource template's variable. */
export type CompleteRef = { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string }

/**
 * Resources, prompts and completions of the servers of a {@link McpSource} or a store view,
 * with the official SDK's names. `server` is the configured server name (in a store view,
 * the view's name for it). Listings follow every page; a server that does not declare the
 * capability answers an empty list. A failure rejects with an `Error` whose message names
 * the server (secrets hidden); a name that is not a connected server rejects at once.
 *
 * Cache hints (SEP-2549): a listing or a read whose result carries a positive `ttlMs` is
 * kept for that long (at most a day) and a repeat is answered from memory, unless
 * {@link CacheOptions.cacheMode} says otherwise. What is kept belongs to the session that
 * asked, so a `private` answer never serves other credentials; a `public` one is also
 * shared through the fleet's `state`, when one is set, for every instance with the same
 * entry. A list change the server announces, or an update of a read resource, drops
 * what was kept of it. Without `ttlMs` (every 2025-era server) each call asks the server.
 */
export interface McpOffers {
  /** Every resource of `server`, or of every connected server (in config order) when omitted. */
  listResources(server?: string, options?: CacheOptions): Promise<ResourceInfo[]>
  /** Every resource template, as {@link McpOffers.listResources} lists resources. */
  listResourceTemplates(server?: string, options?: CacheOptions): Promise<ResourceTemplateInfo[]>
  /** `resources/read`: the result as sent (an MCP Apps `ui://` view is read like any other). */
  readResource(
    server: string,
    uri: string,
    options?: CacheOptions,
  ): Promise<{ contents: ResourceContents[]; [key: string]: unknown }>
  /** Every prompt, as {@link McpOffers.listResources} lists resources. */
  listPrompts(server?: string, options?: CacheOptions): Promise<PromptInfo[]>
  /** `prompts/get` with its arguments: the result as sent. */
  getPrompt(
    server: string,
    name: string,
    args?: Record<string, string>,
  ): Promise<{ description?: string; messages: PromptMessage[]; [key: string]: unknown }>
  /**
   * `completion/complete` for a prompt argument or a resource template variable;
   * `context.arguments` holds the values already chosen. A server without the
   * `completions` capability answers `{ completion: { values: [] } }`.
   */
  complete(
    server: string,
    ref: CompleteRef,
    argument: { name: string; value: string },
    context?: { arguments?: Record<string, string> },
  ): Promise<{ completion: { values: string[]; total?: number; hasMore?: boolean }; [key: string]: unknown }>
  /**
   * Calls `onUpdate` each time `server` says resource `uri` changed: through
   * `resources/subscribe` in the 2025 era, through a `subscriptions/listen` request whose
   * filter names `uri` in the 2026-07-28 one. Resolves once the server has accepted, with
   * the function that ends the subscription (in the 2025 era the server hears
   * `resources/unsubscribe` unless another subscriber of `uri` remains; calling it again
   * does nothing). A server whose capabilities lack `resources.subscribe` rejects with an
   * `Error` naming it.
   *
   * Updates come one at a time; while `onUpdate` has not run, newer ones replace older
   * ones (an update means "read it again"), so a server flooding updates grows no queue
   * and the latest always comes. What `onUpdate` throws or rejects with is ignored.
   * `close()` ends every subscription. In a store view the subscription follows the view's
   * name for the server: each new session subscribes again (after a restart, after
   * `updateServer`, after a removed server of that name is added again; a new session that
   * refuses is skipped), until the function is called or the store closes.
   */
  subscribeResource(
    server: string,
    uri: string,
    onUpdate: (update: ResourceUpdate) => void | Promise<void>,
  ): Promise<() => Promise<void>>
  /**
   * Every skill `server` (or every connected server, in config order) publishes through
   * the skills extension (`skills/list`, every page), as its entries say: nothing of a
   * skill is read. A server without the extension lists none. An entry that breaks the
   * extension's rules rejects with `TOOLNEXUS_SKILL_REJECTED`, naming the server and the
   * skill.
   */
  listSkills(server?: string, options?: CacheOptions): Promise<SkillEntry[]>
  /**
   * Loads one skill of `server`: `skill` is its name as listed, or the URI of its
   * `SKILL.md` (asked with `skills/get`, so an unlisted skill loads too). Its limits (512
   * files, 16 MiB) are checked from the entry first; then its `SKILL.md` is read and
   * checked against the entry: size, SHA-256 digest, and frontmatter field by field. A
   * mismatch rejects with `TOOLNEXUS_SKILL_REJECTED` naming the server, the skill and
   * what differs; an unknown name with `TOOLNEXUS_UNKNOWN_SKILL`; a name two skills share
   * with `TOOLNEXUS_INVALID_ARGUMENT` (name one by its URI).
   */
  loadSkill(server: string, skill: string): Promise<LoadedSkill>
}

/** Per call: how kept answers may serve it (see {@link McpOffers}). */
export interface CacheOptions {
  /**
   * `"use"` (the default): a fresh kept answer, else the server's, kept as it says;
   * `"refresh"`: always the server's, kept; `"bypass"`: always the server's, nothing kept.
   */
  cacheMode?: "use" | "refresh" | "bypass"
}

/** A skill as its server lists it (`skills/list`), with the server it came from. */
export interface SkillEntry {
  /** As in {@link ResourceInfo.server}. */
  server: string
  /** The URI of its `SKILL.md`: with the server, what identifies the skill. */
  uri: string
  /** `frontmatter.name`: a label, which two skills of one server may share. */
  name: string
  /** Its `SKILL.md` frontmatter, every field the author wrote. */
  frontmatter: { name: string; description: string; [field: string]: unknown }
  /** Every file of the skill with its SHA-256 digest and size, or `"dynamic"` (no digests). */
  resources: Array<{ uri: string; digest: string; size: number }> | "dynamic"
}

/** A loaded skill: its `SKILL.md` read and verified against its entry. */
export interface LoadedSkill extends SkillEntry {
  /** `SKILL.md` after its frontmatter. */
  body: string
  /** Its files other than `SKILL.md`, none read yet; `path` is relative to the skill's root. */
  files: Array<{ path: string; uri: string; size: number }>
  /** Whether its files are checked against digests: `false` only for a `"dynamic"` skill. */
  verified: boolean
  /** The media type the server gave `SKILL.md`. */
  mimeType?: string | null
  /**
   * Reads one file, by its path in the skill (`references/FORMS.md`) or its URI, and checks
   * it against the entry (size, then digest) before returning it. A file the entry does
   * not list rejects with `TOOLNEXUS_SKILL_REJECTED` before anything is asked.
   */
  readFile(path: string): Promise<SkillFile>
}

/** A file of a loaded skill, as read and checked. */
export interface SkillFile {
  path: string
  uri: string
  /** Its length in bytes. */
  size: number
  mimeType?: string
  /** The file, when the server sent it as text. */
  text?: string
  /** The file in base64, when the server sent it as a blob. */
  blob?: string
}

// Declaration merging: a report counts what a connected server offers, when it declares it.
export interface McpServerReport {
  /** How many resources it lists, when it declares the `resources` capability. */
  resourceCount?: number
  /** How many prompts it lists, when it declares the `prompts` capability. */
  promptCount?: number
}

// Declaration merging: every source and store view offers them (not enumerable on a source).
export interface McpSource extends McpOffers {}
export interface McpStoreView extends McpOffers {}

// Only the declarations marked `export` are public (ServerCommon and LocalServerEntry stay internal).
export {}

/**
 * A provider's schema profile: `openai-strict` (OpenAI function calling with `strict: true`:
 * every object closed, every property required, optional ones nullable), `openai`,
 * `anthropic`, `gemini` (Gemini's OpenAPI subset), `portable` (what all of them accept
 * without strict mode: Gemini's rules, the narrowest).
 */
export type SchemaProfile = "openai-strict" | "openai" | "anthropic" | "gemini" | "portable"

/**
 * A tool's input schema (or a schema) as `profile`'s provider accepts it: `$ref`s inlined
 * (a recursive one expanded twice, then any value), the root a plain object, keywords the
 * provider refuses removed (constraints among them written into the description). Made once
 * per schema object and profile and cached: do not modify the result. For `openai-strict`,
 * a schema strict mode cannot express comes back as the `openai` one.
 * @default profile "portable"
 */
export function providerSchema(
  schemaOrTool: JSONSchema | FrozenJSONSchema | Tool | StoreTool,
  profile?: SchemaProfile,
): JSONSchema
