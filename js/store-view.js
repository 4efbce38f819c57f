// One view of a store: its tools, status and offers as frozen objects, made once per
// change the view can see (keyed on the view's revision), so listing again costs a
// revision read and an array copy. The store itself (js/store.js) is its store view.
import { runToolCall } from "./call.js"
import { configSource } from "./config-source.js"
import { mcpTools } from "./mcp-tool.js"
import { offerMethods } from "./offers.js"
import { chooseTools, metaTools, searchLimit } from "./meta-tools.js"
import { Listed } from "./listed.js"
import { fromNative, invalidArgument } from "./errors.js"
import { APP_ONLY } from "./visibility.js"

export const INVALID_CONFIG = "TOOLNEXUS_INVALID_CONFIG"

/** The store's own listeners, reached from any of its views. */
export const STORE = Symbol("store view")

// Each native store's call queue (see `callQueue`), which settles its calls.
export const queues = new WeakMap()

/**
 * One view of the store: the whole store (`agent` null) or one agent's servers.
 * Everything it returns for a given store version is computed once and shared.
 */
export class View {
  #store
  #native
  #agent
  // Caches, each valid while the view's revision equals theirs.
  #list = { revision: -1, listing: undefined, infos: [], tools: undefined }
  #apps = { revision: -1, tools: [] }
  // How this view's tools start and abort native calls, keyed by service name (see `runToolCall`).
  #caller = {
    start: (serviceName, target, json, timeout, wantsProgress, maxTotal, task, trace) =>
      this.#native.callTool(this.#agent, serviceName, target, json, timeout, wantsProgress, maxTotal, task, trace),
    abort: (serviceName, id) => this.#native.abortCall(this.#agent, serviceName, id),
    attributes: (serviceName) => this.#native.spanAttributes(this.#agent, serviceName),
  }
  #status = { revision: -1, value: undefined }
  #offers
  #meta

  constructor(store, nativeStore, agent) {
    this.#store = store
    this.#native = nativeStore
    this.#agent = agent
  }

  /** The agent id of this view, or `null` for the store view. */
  get agentId() {
    return this.#agent
  }

  /** Serves this view as one MCP server (see js/serve.js). */
  _serve(options) {
    return this.#native.serve(this.#agent, options)
  }

  /** The store version of the latest change this view can see. */
  _revision() {
    return this.#native.revision(this.#agent)
  }

  #current() {
    const revision = this._revision()
    if (this.#list.revision !== revision) this.#list = this.#read(this.#native.listTools(this.#agent), revision)
    return this.#list
  }

  /** A native listing as the view keeps it: an entry per tool, its handles made when asked for. */
  #read(listing, revision) {
    // Flat arrays (see `NativeListing.json`): an array per tool was a fifth of the garbage
    // a large listing leaves.
    const { groups, tools, extras, deferred } = JSON.parse(listing.json())
    const count = tools.length / 3
    const infos = new Array(count)
    const targets = new Array(count)
    const extraKeys = []
    const limits = new Map() // service → its entry's maxOutputChars, when it has one
    const listed = new Listed(listing, infos)
    let i = 0
    let next = 0 // the next tool with extra members: `extras[next]` is its number
    for (const [serviceName, clientId, size, maxOutputChars] of groups) {
      if (maxOutputChars !== null) limits.set(serviceName, maxOutputChars)
      for (const last = i + size; i < last; i++) {
        let keys
        let json
        if (extras[next] === i) {
          keys = extraKeys[i] = extras[next + 1]
          json = extras[next + 2]
          next += 3
        }
        infos[i] = listed.entry(i, tools[3 * i], tools[3 * i + 1], serviceName, clientId, keys, json)
        targets[i] = tools[3 * i + 2]
      }
    }
    return { revision, listing, infos, targets, extraKeys, limits, deferred: new Set(deferred), tools: undefined }
  }

  /** Resources, prompts and completions of this view's servers (see `offerMethods`). */
  #offered() {
    const ask = (server, kind, params, trace) => this.#native.ask(this.#agent, server, kind, params, trace)
    const subscribe = (server, uri, onText) => this.#native.subscribeResource(this.#agent, server, uri, onText)
    const attributes = (server) => this.#native.spanAttributes(this.#agent, server)
    const names = () => this.#native.serverNames(this.#agent)
    return (this.#offers ??= offerMethods(ask, names, subscribe, attributes))
  }

  /** Every resource of the server the view names `server` (each server when omitted), each with its `server`. */
  listResources(server, options) {
    return this.#offered().listResources(server, options)
  }

  /** Every resource template, as `listResources` lists resources. */
  listResourceTemplates(server, options) {
    return this.#offered().listResourceTemplates(server, options)
  }

  /** `resources/read` of `uri`: `{ contents }` as the server sent them. */
  readResource(server, uri, options) {
    return this.#offered().readResource(server, uri, options)
  }

  /** Every prompt, as `listResources` lists resources. */
  listPrompts(server, options) {
    return this.#offered().listPrompts(server, options)
  }

  /** Every skill, as `listResources` lists resources: entries only, nothing read. */
  listSkills(server, options) {
    return this.#offered().listSkills(server, options)
  }

  /** One skill by name or `SKILL.md` URI, its `SKILL.md` read and verified (see index.d.ts). */
  loadSkill(server, skill) {
    return this.#offered().loadSkill(server, skill)
  }

  /** `prompts/get`: `{ description?, messages }` as the server sent them. */
  getPrompt(server, name, args) {
    return this.#offered().getPrompt(server, name, args)
  }

  /** `completion/complete` for a prompt argument or a resource template variable. */
  complete(server, ref, argument, context) {
    return this.#offered().complete(server, ref, argument, context)
  }

  /** Calls `onUpdate({ server, uri, ... })` for each update of `uri`, again after a restart; resolves the unsubscribe function. */
  subscribeResource(server, uri, onUpdate) {
    return this.#offered().subscribeResource(server, uri, onUpdate)
  }

  /** Tools of this view as the cache holds them now. Never waits, never does I/O. */
  listTools() {
    return this.#current().infos.slice()
  }

  /** Like `listTools()`, after waiting (bounded) for this view's servers still initializing. */
  async listToolsAsync() {
    await this.#settle()
    return this.listTools()
  }

  async #settle() {
    if (this.#native.anyInitializing(this.#agent)) await this.#native.waitInitializing(this.#agent)
  }

  /** Executable handles for the tools of `listTools()`. */
  tools() {
    return this.#handles(this.#current()).slice()
  }

  #handles(list, own) {
    if (list.tools) return list.tools
    const calls = queues.get(this.#native)
    // What every tool of a service shares, made once per service.
    const services = new Map()
    const service = ({ serviceName, clientId }) => {
      let shared = services.get(serviceName)
      if (!shared) {
        const metadata = Object.freeze({ server: serviceName, clientId })
        shared = { metadata, own: { serviceName, clientId, ...own } }
        services.set(serviceName, shared)
      }
      return shared
    }
    // A `null` target is the name after the service's name and `_` (see `json()`).
    const target = (info, i) => list.targets[i] ?? info.name.slice(info.serviceName.length + 1)
    const origin = (info, i) => {
      const origin = { server: info.serviceName, tool: target(info, i), clientId: info.clientId }
      const limit = list.limits.get(info.serviceName)
      if (limit !== undefined) origin.maxOutputChars = limit
      if (list.deferred.has(i)) origin.deferLoading = true
      return Object.freeze(origin)
    }
    list.tools = list.infos.map((info, i) => this.#tool(info, origin(info, i), list.extraKeys[i], calls, service(info)))
    return list.tools
  }

  /** Handles for this view's tools only an app's view may see and call: in no model-facing list. */
  appTools() {
    const revision = this._revision()
    if (this.#apps.revision !== revision) {
      const list = this.#read(this.#native.listAppTools(this.#agent), revision)
      this.#apps = { revision, tools: this.#handles(list, { visibility: APP_ONLY }) }
    }
    return this.#apps.tools.slice()
  }

  /** Like `tools()`, after the same bounded wait as `listToolsAsync()`. */
  async toolsAsync() {
    await this.#settle()
    return this.tools()
  }

  /** The tools of `tools()` that match `query` best, best first; from memory, never waits. */
  searchTools(query, opts) {
    const limit = searchLimit(query, opts)
    // The native index answers for the revision it was built at: retried when that is
    // not the listing's (something changed in between).
    for (let tries = 0; tries < 3; tries++) {
      const list = this.#current()
      const [revision, ...found] = this.#native.searchTools(this.#agent, query, limit)
      if (revision !== list.revision) continue
      const tools = this.#handles(list)
      return found.map((i) => tools[i])
    }
    return []
  }

  /** `search_tools`, `describe_tool` and `call_tool` over this view, for a model. */
  metaTools() {
    this.#meta ??= metaTools({
      search: (query, limit) => this.searchTools(query, { limit }),
      find: (name) => this.#byName().get(name) ?? this.appTools().find((tool) => tool.name === name),
    })
    return this.#meta.slice()
  }

  /** `tools()`, or `metaTools()` when the listing is too large to hand a model whole. */
  modelTools(opts) {
    return chooseTools(opts, {
      tools: () => this.tools(),
      size: () => this.#schemaChars(),
      meta: () => this.metaTools(),
    })
  }

  #byName() {
    const list = this.#current()
    list.byName ??= new Map(this.#handles(list).map((tool) => [tool.name, tool]))
    return list.byName
  }

  #schemaChars() {
    const list = this.#current()
    list.chars ??= list.infos.reduce(
      (n, info) => n + info.name.length + info.description.length,
      list.listing.schemaChars(),
    )
    return list.chars
  }

  /** Runs the tool named `name` in this view; an unknown name is an error result. */
  async callTool(name, args, ctx) {
    // The host's own call: a tool only an app's view may see is the host's to run too.
    const named = (t) => t.name === name
    const tool = this.tools().find(named) ?? this.appTools().find(named)
    if (tool) return tool.execute(args, ctx)
    const where = this.#agent === null ? "the store" : `agent "${this.#agent}"`
    return { output: `no tool "${name}" in ${where}`, isError: true, metadata: { code: "TOOLNEXUS_UNKNOWN_TOOL" } }
  }

  /** Per service of this view: state, last error, tool count, connect time, restarts, client id. */
  status() {
    const revision = this._revision()
    if (this.#status.revision !== revision) {
      this.#status = { revision, value: statusObject(this.#native.status(this.#agent)) }
    }
    return this.#status.value
  }

  /** Whether any server of this view is still `initializing`. */
  isInitializing() {
    return this.#native.anyInitializing(this.#agent)
  }

  /** Resolves once no server of this view is `initializing`, each waited for at most its bound. */
  waitReady() {
    return this.#settle()
  }

  /** Adds and starts connecting the servers of an mcp.json (path or object) in this view. */
  addServers(config) {
    fromNative(() => this.#native.addServers(this.#agent, configSource(config)), INVALID_CONFIG)
    return this
  }

  /** Stops and forgets the server named `name` (its name in this view). False when there is none. */
  removeServer(name) {
    return this.#native.removeServer(this.#agent, String(name))
  }

  /** Replaces the entry of server `name` and reconnects it. */
  updateServer(name, entry) {
    const json = JSON.stringify(entry ?? null)
    fromNative(() => this.#native.updateServer(this.#agent, String(name), json), INVALID_CONFIG)
    return this
  }

  /**
   * Calls `listener` when this view's tools or statuses change. Returns a function that
   * stops it. For the store view that is every change; an agent view is told only of
   * changes it can see.
   */
  onChange(listener) {
    if (typeof listener !== "function") throw invalidArgument("onChange: listener must be a function")
    // The store itself is built with no store (`this` does not exist before `super()`).
    return (this.#store ?? this)[STORE].subscribe(this, listener)
  }

  /**
   * The handle of listed entry `info`: `extra` is the keys of its members beyond the first
   * three, in the listing's order (read through the entry); `metadata` and `own` are its
   * service's (see `#handles`).
   */
  #tool(info, origin, extra, calls, { metadata, own }) {
    const { name, description, serviceName } = info
    const native = this.#caller
    const execute = (args, ctx) => runToolCall(calls, native, serviceName, metadata, origin.tool, args, ctx)
    return Object.freeze(storeTool(info, { name, description, extra, own, execute }, origin))
  }
}

/** A store tool reads its schema and members through its listed entry. */
const storeTool = mcpTools({
  schema: (info) => info.inputSchema,
  members: (tool, info, keys) => {
    for (const key of keys) Object.defineProperty(tool, key, { get: () => info[key], enumerable: true })
  },
})

/**
 * The status of a view's services, keyed on their names, from the native list in view
 * order. Keys follow JavaScript's property order: integer-like names ("1", "42") come
 * first in ascending order, then the others in view order.
 */
function statusObject(entries) {
  const status = {}
  for (const { name, state, lastError, toolCount, connectedAt, restarts, clientId, protocolVersion } of entries) {
    const entry = { state }
    if (lastError != null) entry.lastError = lastError
    entry.toolCount = toolCount
    if (connectedAt != null) entry.connectedAt = connectedAt
    entry.restarts = restarts
    entry.clientId = clientId
    if (protocolVersion != null) entry.protocolVersion = protocolVersion
    status[name] = Object.freeze(entry)
  }
  return Object.freeze(status)
}
