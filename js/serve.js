// serveMcp: a store view served as one MCP server (the gateway, served from Rust; see
// src/serve.rs). This layer checks the options, expands `${VAR}` in tokens, and holds
// Node's event loop open while the gateway listens, as a listening net.Server does.
import { createRequire } from "node:module"
import * as native from "../binding.js"
import { failureError, invalidArgument, nativeCoded } from "./errors.js"
import { View } from "./store-view.js"

const version = () => createRequire(import.meta.url)("../package.json").version

/** `{ "/mcp": token, "/agents/<id>/mcp": [token, …] }` as arrays of expanded tokens. */
function tokensOf(tokens) {
  if (tokens === undefined) return undefined
  if (tokens === null || typeof tokens !== "object" || Array.isArray(tokens)) {
    throw invalidArgument("serveMcp: auth.tokens must be an object of paths to tokens")
  }
  const out = {}
  for (const [path, value] of Object.entries(tokens)) {
    if (path !== "/mcp" && !/^\/agents\/[^/]+\/mcp$/.test(path)) {
      throw invalidArgument(`serveMcp: auth.tokens: ${JSON.stringify(path)} is not /mcp or /agents/<id>/mcp`)
    }
    const list = Array.isArray(value) ? value : [value]
    out[path] = list.map((token) => {
      const expanded = typeof token === "string" ? native.expandEnv(token) : ""
      // An empty token would open the path to anyone who sends `Bearer ` and nothing more.
      if (expanded === "") throw invalidArgument(`serveMcp: auth.tokens[${JSON.stringify(path)}] has an empty token`)
      return expanded
    })
  }
  return out
}

/** `auth.oauth` as the binding takes it: each path's scopes as an array. */
function oauthOf(oauth) {
  if (oauth === undefined) return undefined
  if (oauth === null || typeof oauth !== "object") throw invalidArgument("serveMcp: auth.oauth must be an object")
  const { issuer, jwksUri, resource, scopes = {} } = oauth
  for (const [key, value] of Object.entries({ issuer, jwksUri, resource })) {
    if ((value !== undefined || key === "issuer") && !(typeof value === "string" && /^https?:\/\/\S+$/.test(value))) {
      throw invalidArgument(`serveMcp: auth.oauth.${key} must be an http(s) URL, got ${JSON.stringify(value)}`)
    }
  }
  if (scopes === null || typeof scopes !== "object" || Array.isArray(scopes)) {
    throw invalidArgument("serveMcp: auth.oauth.scopes must be an object of paths to scopes")
  }
  const byPath = {}
  for (const [path, value] of Object.entries(scopes)) {
    const list = Array.isArray(value) ? value : [value]
    if (!list.every((scope) => typeof scope === "string" && scope !== "")) {
      throw invalidArgument(`serveMcp: auth.oauth.scopes[${JSON.stringify(path)}] must be scopes`)
    }
    byPath[path] = list
  }
  return { issuer, jwksUri, resource, scopes: byPath }
}

function optionsOf(opts) {
  if (opts === null || typeof opts !== "object") throw invalidArgument("serveMcp: options must be an object")
  const { http, stdio, meta, auth, allowedOrigins, name } = opts
  if (http !== undefined && (typeof http !== "string" || !/^(\[[^\]]+\]|[^:\s]+):\d+$/.test(http))) {
    throw invalidArgument(`serveMcp: http must be "host:port", got ${JSON.stringify(http)}`)
  }
  for (const [key, value] of Object.entries({ stdio, meta })) {
    if (value !== undefined && typeof value !== "boolean") {
      throw invalidArgument(`serveMcp: ${key} must be a boolean, got ${JSON.stringify(value)}`)
    }
  }
  if (stdio && http !== undefined) throw invalidArgument("serveMcp: http and stdio are one or the other")
  if (
    allowedOrigins !== undefined &&
    !(Array.isArray(allowedOrigins) && allowedOrigins.every((o) => typeof o === "string"))
  ) {
    throw invalidArgument("serveMcp: allowedOrigins must be an array of strings")
  }
  if (auth !== undefined && (auth === null || typeof auth !== "object")) {
    throw invalidArgument("serveMcp: auth must be an object")
  }
  if (auth?.tokens != null && auth?.oauth != null) {
    throw invalidArgument("serveMcp: auth takes tokens or oauth, not both")
  }
  return {
    http,
    stdio,
    meta,
    name: typeof name === "string" && name !== "" ? name : "toolnexus",
    version: version(),
    tokens: tokensOf(auth?.tokens ?? undefined),
    oauth: oauthOf(auth?.oauth ?? undefined),
    allowedOrigins,
  }
}

/**
 * @param {import("../index.d.ts").McpStoreView} view
 * @param {import("../index.d.ts").ServeMcpOptions} [opts]
 */
export async function serveMcp(view, opts = {}) {
  if (!(view instanceof View)) throw invalidArgument("serveMcp: expected a store or a store view (createMcpStore)")
  const options = optionsOf(opts)
  let outcome
  try {
    outcome = await view._serve(options)
  } catch (error) {
    throw nativeCoded(error, "TOOLNEXUS_INVALID_ARGUMENT")
  }
  if (!(outcome instanceof native.NativeGateway)) throw failureError(outcome)
  const gateway = outcome
  // Over HTTP nothing of Node's waits on the listener: this timer is what does.
  const holding = options.stdio ? undefined : setInterval(() => {}, 2 ** 31 - 1)
  const ended = gateway.ended().finally(() => clearInterval(holding))
  return Object.freeze({
    url: gateway.url ?? undefined,
    ended,
    async close() {
      await gateway.close()
      await ended
    },
  })
}
