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
import { Listing } from "./js/listed.js"
import { APP_ONLY } from "./js/visibility.js"

const INVALID_CONFIG = "TOOLNEXUS_INVALID_CONFIG"

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
  const { status, servers, failures } = JSON.parse(handle.summary())
  if (!opts?.[PRINTS_FAILURES]) report(failures)
  const listing = new Listing(handle.listing())
  const tools = {}
  for (const { server } of listing.groups) tools[server] = []
  for (let i = 0; i < listing.length; i++) tools[listing.group(i).server].push(listing.entry(i))
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
  const { status, failures, warnings } = JSON.parse(handle.summary())
  report(failures)
  report(warnings)
  // Tools are keyed by their number in the listing.
  const caller = {
    start: (index, _tool, json, timeout, wantsProgress, maxTotal, task, trace) =>
      handle.callTool(index, json, timeout, wantsProgress, maxTotal, task, trace),
    abort: (index, id) => handle.abortCall(index, id),
    attributes: (index) => handle.spanAttributes(listing.group(index).server),
  }
  const listing = new Listing(handle.listing())
  const loaded = mcpTools(listing, { calls, native: caller, key: (i) => i })
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
