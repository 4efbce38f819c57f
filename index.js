// The public entry point: a thin layer over the native binding. It turns AbortSignals into
// native cancellations, parses the JSON the binding returns, prints diagnostics and shapes
// Tool objects. Everything MCP happens in Rust.
import * as native from "./binding.js"

import { callQueue, runToolCall } from "./js/call.js"
import { configSource } from "./js/config-source.js"
import { mcpTools } from "./js/mcp-tool.js"
import { withSearch } from "./js/meta-tools.js"
import { bridgeOAuth } from "./js/oauth.js"
import { PRINTS_FAILURES, report } from "./js/notices.js"
import { withOffers } from "./js/offers.js"
import { bridgeState, tellUnsharedSignIns } from "./js/state.js"
import { fromNative } from "./js/errors.js"
import { APP_ONLY } from "./js/visibility.js"

const INVALID_CONFIG = "TOOLNEXUS_INVALID_CONFIG"
import { lazyExtras } from "./js/tool-extra.js"

export { defineTool } from "./js/define-tool.js"
export { buildMcpServer } from "./js/mcp-server.js"
export { createMcpStore } from "./js/store.js"
export { serveStoreApi } from "./js/store-api.js"
export { serveMcp } from "./js/serve.js"
export { providerSchema } from "./js/provider-schema.js"

// Server process trees must not outlive this process, even when nobody called close().
process.on("exit", native.killAllServers)

/** Runs `start(canceller)`, cancelling it when `signal` fires; rejects with `signal.reason`. */
async function withSignal(signal, start) {
  if (signal?.aborted) throw signal.reason
  const canceller = new native.Canceller()
  const onAbort = () => canceller.cancel()
  signal?.addEventListener("abort", onAbort, { once: true })
  try {
    return await start(canceller)
  } catch (error) {
    throw signal?.aborted ? signal.reason : error
  } finally {
    signal?.removeEventListener("abort", onAbort)
  }
}

export function parseMcpConfig(input) {
  return JSON.parse(fromNative(() => native.parseMcpConfig(configSource(input)), INVALID_CONFIG))
}

export async function listMcpTools(input, opts) {
  const oauth = bridgeOAuth(opts?.oauth)
  const state = bridgeState(opts?.state, "listMcpTools")
  const handle = await withSignal(opts?.signal, (canceller) =>
    fromNative(() => native.listMcpTools(configSource(input), canceller, ...oauth, ...state), INVALID_CONFIG),
  )
  const { tools, status, servers, failures } = JSON.parse(handle.summary())
  if (!opts?.[PRINTS_FAILURES]) report(failures)
  for (const [server, list] of Object.entries(tools)) {
    const withSchema = lazySchemas((index) => handle.inputSchema(server, index))
    const withExtra = lazyExtras((index) => handle.toolExtra(server, index))
    // New objects: JSON.parse's own would turn into slow dictionaries here.
    for (let i = 0; i < list.length; i++) {
      const { name, description, extra, app } = list[i]
      list[i] = withSchema({ name, description }, i)
      if (extra) withExtra(list[i], i, extra)
      if (app) list[i].visibility = APP_ONLY
    }
  }
  // Not enumerable: the inventory's own keys stay the contract's `{ tools, status }`.
  return Object.defineProperty({ tools, status }, "servers", { value: servers, enumerable: false })
}

export async function loadMcp(input, opts) {
  const waitFor = opts?.waitFor && bridgeWaitFor(opts.waitFor)
  const calls = callQueue(bridgeOnLog(opts?.onLog))
  const state = bridgeState(opts?.state, "loadMcp")
  tellUnsharedSignIns(state)
  const handle = await withSignal(opts?.signal, (canceller) =>
    fromNative(
      () => native.loadMcp(configSource(input), canceller, waitFor, calls.wake, ...bridgeOAuth(opts?.oauth), ...state),
      INVALID_CONFIG,
    ),
  )
  const { tools, status, failures, warnings } = JSON.parse(handle.summary())
  report(failures)
  report(warnings)
  const loaded = loadedTools(handle, calls, tools)
  // Those only an app's view may see come last (see `Source::name_tools`).
  const models = loaded.findIndex((tool) => tool.visibility === APP_ONLY)
  const source = {
    tools: models < 0 ? loaded : loaded.slice(0, models),
    status,
    close: () => handle.close(),
  }
  // Not enumerable, as the other methods: the source's own keys stay the contract's.
  Object.defineProperty(source, "appTools", { value: models < 0 ? [] : loaded.slice(models) })
  const ask = (server, kind, params, trace) => handle.ask(server, kind, params, trace)
  withSearch(source, (query, limit) => handle.searchTools(query, limit))
  const subscribe = (server, uri, onText) => handle.subscribeResource(server, uri, onText)
  const attributes = (server) => handle.spanAttributes(server)
  return withOffers(source, ask, () => handle.serverNames(), subscribe, attributes)
}

/** `waitFor` as the binding calls it: JSON in, JSON out, and a throw answers "cancelled". */
function bridgeWaitFor(waitFor) {
  return async (requestJson) => {
    try {
      return JSON.stringify(await waitFor(JSON.parse(requestJson)))
    } catch {
      return JSON.stringify({ id: "", ok: false, reason: "cancelled" })
    }
  }
}

// Without an onLog, what a server says at warning or above still reaches a person.
const LOUD = new Set(["warning", "error", "critical", "alert", "emergency"])

/**
 * `onLog` as the binding calls it; a throwing listener must not take the process down.
 * The listener gets `data` as the server sent it; the default printer prints `text`, which
 * has the server's secrets hidden.
 */
function bridgeOnLog(onLog) {
  return ({ server, level, data, text }) => {
    if (onLog) {
      try {
        onLog(server, level, JSON.parse(data))
      } catch {}
    } else if (LOUD.has(level)) {
      report([`MCP server "${server}" ${level}: ${text}`])
    }
  }
}

/**
 * The Tools of a loaded source, from its summary's `{ name, description, server, tool }`.
 * Each costs one object, its `execute` closure and its frozen `metadata`: everything else
 * is shared by the source's tools, as an inventory may list a hundred thousand of them.
 */
function loadedTools(handle, calls, tools) {
  const schemas = [] // parsed when first read, by tool index
  const withExtra = lazyExtras((index) => handle.toolExtra(index))
  const resultMetadata = new Map() // server → the `{ server }` every result's metadata starts from
  // Tools are keyed by their index in the summary.
  const native = {
    start: (index, _tool, json, timeout, wantsProgress, maxTotal, task, trace) =>
      handle.callTool(index, json, timeout, wantsProgress, maxTotal, task, trace),
    abort: (index, id) => handle.abortCall(index, id),
    attributes: (index) => handle.spanAttributes(tools[index].server),
  }
  const make = mcpTools({
    schema: (index) => (schemas[index] ??= JSON.parse(handle.inputSchema(index))),
    setSchema: (index, value) => (schemas[index] = value),
    members: withExtra,
  })
  return tools.map(({ name, description, server, tool, maxOutputChars, extra, app, defer }, index) => {
    if (!resultMetadata.has(server)) resultMetadata.set(server, { server })
    const metadata = resultMetadata.get(server)
    const execute = (args, ctx) => runToolCall(calls, native, index, metadata, tool, args, ctx)
    // The server's `maxOutputChars` and `deferLoading`, for the adapters, only when configured.
    const origin = { server, tool }
    if (maxOutputChars !== undefined) origin.maxOutputChars = maxOutputChars
    if (defer) origin.deferLoading = true
    Object.freeze(origin)
    return make(index, { name, description, extra, own: app ? { visibility: APP_ONLY } : undefined, execute }, origin)
  })
}

const INDEX = Symbol("toolnexus.index")

/**
 * Gives `{ name, description }` objects an `inputSchema` whose JSON text `schemaJson(index)`
 * fetches and which is parsed when first read (most of a large inventory never is); the
 * object's number is kept in a hidden property. It is still an own enumerable property, so
 * spreading or JSON.stringify of the object sees it, and it can be assigned. The accessors
 * are shared by every object given one here: closures per object would cost several
 * times what the object itself does.
 */
function lazySchemas(schemaJson) {
  const schemas = []
  const inputSchema = {
    get() {
      return (schemas[this[INDEX]] ??= JSON.parse(schemaJson(this[INDEX])))
    },
    set(value) {
      schemas[this[INDEX]] = value
    },
    enumerable: true,
    configurable: true,
  }
  return (object, index) => {
    Object.defineProperty(object, INDEX, { value: index })
    return Object.defineProperty(object, "inputSchema", inputSchema)
  }
}

export function sanitize(name) {
  return native.sanitize(String(name))
}

export function expandEnvHeaders(headers) {
  if (headers === undefined) return undefined
  return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, native.expandEnv(String(value))]))
}

export function elicitationToRequest(params) {
  return JSON.parse(native.elicitationToRequest(JSON.stringify(params ?? {})))
}

export function answerToElicitResult(answer) {
  return JSON.parse(native.answerToElicitResult(JSON.stringify(answer ?? null)))
}
