// What the gateway tests (serve*.test.ts) share: cleanup in last-in first-out order, a
// store served over HTTP, the official clients connected to it (SDK v1
// @modelcontextprotocol/sdk for 2025-11-25, SDK v2 @modelcontextprotocol/client with
// `versionNegotiation: "auto"` for 2026-07-28), raw streamable-HTTP requests (a 2025-11-25
// session opened by hand, a stateless 2026-07-28 request), and `toolnexus serve` run as a
// process.
import assert from "node:assert/strict"
import { spawn, type ChildProcess } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import type { TestContext } from "node:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Client as Client2, StreamableHTTPClientTransport as HttpTransport2 } from "@modelcontextprotocol/client"
import {
  createMcpStore,
  serveMcp,
  type McpGateway,
  type McpStore,
  type McpStoreOptions,
  type McpStoreView,
  type ServeMcpOptions,
} from "toolnexus"
import { NODE, poll, ROOT, tempDir } from "./helpers.js"
import { here } from "./liveness.js"

export const LEGACY = "2025-11-25"
export const MODERN = "2026-07-28"
export const ACCEPT = "application/json, text/event-stream"
export const CLIENT_INFO = { name: "serve-test", version: "1.0.0" }
export const T = { timeout: 60_000 }

// ---------------------------------------------------------------- cleanup

export type Job = () => unknown
/** Registers a job for the end of the test. */
export type Later = (job: Job) => void

/** Runs `jobs` last first, every one of them: a close failing must not hide the test's own failure. */
export async function runLifo(jobs: Job[]): Promise<void> {
  for (const job of jobs.reverse()) {
    try {
      await job()
    } catch {
      // a failed cleanup fails no test
    }
  }
}

/** Jobs run last-in first-out when the test ends: clients, then gateways, then stores (then Redis). */
export function cleanup(t: TestContext): Later {
  const jobs: Job[] = []
  t.after(() => runLifo(jobs))
  return (job) => void jobs.push(job)
}

// ---------------------------------------------------------------- stores and gateways

type Servers = Record<string, object>

/** Waits until every service of `view` is connected, failing with the states otherwise. */
export async function ready(view: McpStoreView): Promise<void> {
  await poll(() => Object.values(view.status()).every((s) => s.state !== "initializing"), 15_000)
  for (const [name, status] of Object.entries(view.status())) {
    assert.equal(status.state, "connected", `${name}: ${status.lastError}`)
  }
}

/** `view` served over HTTP (on 127.0.0.1, at /mcp), its gateway closed by `later`. */
export async function serveView(later: Later, view: McpStoreView, opts?: ServeMcpOptions): Promise<McpGateway> {
  const gateway = await serveMcp(view, opts)
  later(() => gateway.close())
  assert.match(gateway.url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
  return gateway
}

export interface Served {
  store: McpStore
  gateway: McpGateway
  url: string
  later: Later
  /** A temp folder of the test's. */
  dir: string
}

/**
 * A store of `servers` (given the test's temp folder, when a function) and of each agent's
 * servers in `agents`, ready, served over HTTP; all closed when the test ends.
 */
export async function served(
  t: TestContext,
  servers: Servers | ((dir: string) => Servers),
  opts: { agents?: Record<string, Servers>; store?: McpStoreOptions } = {},
): Promise<Served> {
  const dir = tempDir(t)
  const later = cleanup(t)
  const store = createMcpStore({ mcpServers: typeof servers === "function" ? servers(dir) : servers }, opts.store)
  later(() => store.close())
  for (const [agent, config] of Object.entries(opts.agents ?? {})) {
    store.forAgent(agent).addServers({ mcpServers: config })
  }
  await ready(store)
  const gateway = await serveView(later, store)
  return { store, gateway, url: gateway.url!, later, dir }
}

/** `path` on `gateway`'s origin. */
export const at = (gateway: McpGateway, path: string) => new URL(path, gateway.url).href

// ---------------------------------------------------------------- the official clients

/** The official SDK v1 client connected over streamable HTTP (2025-11-25); the caller closes it. */
export async function connectV1(url: string, opts: { headers?: Record<string, string>; sessionId?: string } = {}) {
  const client = new Client(CLIENT_INFO)
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(opts.headers ? { requestInit: { headers: opts.headers } } : {}),
    ...(opts.sessionId ? { sessionId: opts.sessionId } : {}),
  })
  await client.connect(transport)
  return { client, transport }
}

/** The official SDK v1 client over streamable HTTP (2025-11-25), closed by `later`. */
export async function v1Http(later: Later, url: string, opts: Parameters<typeof connectV1>[1] = {}) {
  const connected = await connectV1(url, opts)
  later(() => connected.client.close())
  return connected
}

/**
 * The official SDK v2 client (`versionNegotiation: "auto"`, so 2026-07-28 with the gateway)
 * over streamable HTTP, with `client` options on top and `transport` options; closed by `later`.
 */
export async function v2Http(
  later: Later,
  url: string,
  opts: {
    client?: ConstructorParameters<typeof Client2>[1]
    transport?: ConstructorParameters<typeof HttpTransport2>[1]
  } = {},
) {
  const client = new Client2(CLIENT_INFO, { versionNegotiation: { mode: "auto" }, ...opts.client })
  await client.connect(new HttpTransport2(new URL(url), opts.transport))
  later(() => client.close())
  return client
}

/** The names of `tools`, sorted. */
export const sorted = (tools: Array<{ name: string }>) => tools.map((x) => x.name).sort()

/** `value` as JSON has it (no undefined members, no class instances). */
export const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value))

/** The texts of a tool result's content (a non-text item as its type). */
export const texts = (result: object) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) =>
    c.type === "text" ? c.text : c.type,
  )

/** The text of a tool result's single text content. */
export const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) => {
  const content = result.content as Array<{ type: string; text?: string }>
  assert.equal(content.length, 1, JSON.stringify(result))
  assert.equal(content[0].type, "text", JSON.stringify(result))
  return content[0].text!
}

/** For assert.rejects: the error is toolnexus's TOOLNEXUS_INVALID_ARGUMENT. */
export const invalidArgument = (error: unknown) => {
  assert.ok(error instanceof Error, `not an Error: ${String(error)}`)
  assert.equal((error as Error & { code?: string }).code, "TOOLNEXUS_INVALID_ARGUMENT", error.message)
  return true
}

// ---------------------------------------------------------------- raw HTTP

export interface JsonRpc {
  jsonrpc?: string
  id?: string | number | null
  result?: Record<string, any>
  error?: { code: number; message: string; data?: unknown }
}

export interface Raw {
  status: number
  headers: Headers
  text: string
  /** The JSON-RPC message of the body, plain JSON or the first response in an event stream. */
  rpc?: JsonRpc
}

/** Status, headers and the start of the body, for assertion messages. */
export const show = (raw: Raw) =>
  `HTTP ${raw.status} ${JSON.stringify(Object.fromEntries(raw.headers))} ${JSON.stringify(raw.text.slice(0, 600))}`

/** A response read: its body, an event stream up to its first JSON-RPC response (it may stay open). */
export async function rawOf(res: Response): Promise<Raw> {
  const raw = { status: res.status, headers: res.headers }
  const type = res.headers.get("content-type") ?? ""
  if (!type.startsWith("text/event-stream")) {
    const text = await res.text()
    try {
      return { ...raw, text, rpc: JSON.parse(text) as JsonRpc }
    } catch {
      return { ...raw, text }
    }
  }
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { ...raw, text }
      text += decoder.decode(value, { stream: true })
      for (const event of text.split(/\r?\n\r?\n/).slice(0, -1)) {
        const data = event
          .split(/\r?\n/)
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n")
        if (!data) continue
        try {
          const message = JSON.parse(data) as JsonRpc
          if ("result" in message || "error" in message) return { ...raw, text, rpc: message }
        } catch {
          // not JSON: read on
        }
      }
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}

/** A request with the headers a streamable HTTP client sends (and `headers` over them). */
async function request(method: string, url: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  const res = await fetch(url, {
    method,
    headers: { accept: ACCEPT, "content-type": "application/json", ...headers },
    body,
    signal: AbortSignal.timeout(10_000),
  })
  return rawOf(res)
}

/** POSTs `body` (JSON unless a string) as a streamable HTTP client does. */
export const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  request("POST", url, headers, typeof body === "string" ? body : JSON.stringify(body))

/** A DELETE, as a streamable HTTP client ends its session. */
export const del = (url: string, headers: Record<string, string> = {}) => request("DELETE", url, headers)

/** A 2025-11-25 initialize request. */
export const initialize = (id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: CLIENT_INFO },
})

/** The headers of a request in the 2025-11-25 session `id`. */
export const sessionHeaders = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": LEGACY })

export interface Session {
  id: string
  /** The headers of a request in the session (those it was opened with too). */
  headers: Record<string, string>
  /** POSTs `body` in the session, with `extra` headers over its own. */
  send(body: unknown, extra?: Record<string, string>): Promise<Raw>
}

/** A 2025-11-25 session opened by hand at `url` (with `headers`): initialize, then notifications/initialized. */
export async function openSession(url: string, headers: Record<string, string> = {}): Promise<Session> {
  const init = await post(url, initialize(), headers)
  assert.equal(init.status, 200, show(init))
  assert.ok(init.rpc?.result, `initialize answered no result: ${show(init)}`)
  assert.equal(init.rpc.result.protocolVersion, LEGACY, show(init))
  const id = init.headers.get("mcp-session-id")
  assert.ok(id, `initialize made no session: ${show(init)}`)
  const inSession = { ...headers, ...sessionHeaders(id) }
  const initialized = await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, inSession)
  assert.ok(initialized.status === 202 || initialized.status === 200, show(initialized))
  return { id, headers: inSession, send: (body, extra = {}) => post(url, body, { ...inSession, ...extra }) }
}

/** One stateless 2026-07-28 request: its version, client info and `capabilities` in `_meta`, and the headers. */
export function modern(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  id: number | string = 1,
  capabilities: object = {},
) {
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  }
  const headers: Record<string, string> = { "mcp-protocol-version": MODERN, "mcp-method": method }
  if (method === "tools/call") headers["mcp-name"] = String(params.name)
  if (method.startsWith("tasks/")) headers["mcp-name"] = String(params.taskId)
  return post(url, { jsonrpc: "2.0", id, method, params: { ...params, _meta } }, headers)
}

/** The tools a stateless tools/list answers, failing with the response otherwise. */
export async function modernTools(url: string): Promise<Array<{ name: string }>> {
  const raw = await modern(url, "tools/list")
  assert.equal(raw.status, 200, show(raw))
  const tools = raw.rpc?.result?.tools
  assert.ok(Array.isArray(tools), `tools/list answered no tools: ${show(raw)}`)
  return tools
}

// ---------------------------------------------------------------- processes and the CLI

export const CLI = path.join(ROOT, "bin", "toolnexus.js")

/** The environment for spawned CLIs: the SDKs' stdio transports pass only a few variables by default. */
export const ENV = Object.fromEntries(
  Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
)

/** A temp mcp.json of `config`. */
export function configFile(dir: string, config: object): string {
  const file = path.join(dir, "mcp.json")
  fs.writeFileSync(file, JSON.stringify(config))
  return file
}

/** The pids a fixture's processes appended to `file` (`--pids`), one a line. */
export const pidsIn = (file: string) =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number) : []

/** Every live process below `pid`. */
export function descendantsOf(pid: number): number[] {
  const parents = here.parents()
  const found: number[] = []
  const queue = [pid]
  while (queue.length > 0) {
    const parent = queue.shift()!
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child)
        queue.push(child)
      }
    }
  }
  return found
}

/** What `promise` resolves to within `ms`, else undefined (the timer never outlives the wait). */
export async function within<V>(promise: Promise<V>, ms: number): Promise<V | undefined> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

export interface Cli {
  child: ChildProcess
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  stderr(): string
}

/**
 * Spawns `toolnexus serve ...args`, its stdin and stdout piped (ignored with `quiet`) and
 * its stderr kept; SIGKILLed if left running when the test ends.
 */
export function spawnCli(t: TestContext, args: string[], { quiet = false } = {}): Cli {
  const child = spawn(NODE, [CLI, "serve", ...args], {
    cwd: ROOT,
    env: process.env,
    stdio: quiet ? ["ignore", "ignore", "pipe"] : "pipe",
  })
  let stderr = ""
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  )
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  })
  return { child, exited, stderr: () => stderr }
}

/**
 * `toolnexus serve ...args` (listening on HTTP), and the URL it says it listens on, once it
 * says so; SIGKILLed if left running.
 */
export async function serveCli(t: TestContext, args: string[]) {
  const cli = spawnCli(t, args, { quiet: true })
  const listening = () => /listening on (\S+)/.exec(cli.stderr())?.[1]
  const ended = () => cli.child.exitCode !== null || cli.child.signalCode !== null
  await poll(() => listening() !== undefined || ended(), 15_000)
  const url = listening()
  assert.ok(url && !ended(), `the CLI never listened\nstderr: ${cli.stderr()}`)
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/, cli.stderr())
  return { ...cli, url }
}

/** Asserts `cli` exits with code 0 within 10 s of `what` (e.g. "its stdin closed"), `who` naming it. */
export async function assertExits0(cli: Cli, who: string, what: string): Promise<void> {
  const exit = await within(cli.exited, 10_000)
  assert.ok(exit, `${who} still runs 10 s after ${what}\nstderr: ${cli.stderr()}`)
  assert.deepEqual(exit, { code: 0, signal: null }, `${who}\nstderr: ${cli.stderr()}`)
}
