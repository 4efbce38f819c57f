// One view of a store: its tools, status and offers as frozen objects, made once per
// change the view can see (keyed on the view's revision), so listing again costs a
// revision read and an array copy. The store itself (js/store.js) is its store view.
import { configSource } from "./config-source.js"
import { mcpTools } from "./mcp-tool.js"
import { offerMethods } from "./offers.js"
import { chooseTools, metaTools, searchLimit } from "./meta-tools.js"
import { Listing } from "./listed.js"
import { fromNative, invalidArgument } from "./errors.js"

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

  /** A native listing as the view keeps it: its entries, their handles made when asked for. */
  #read(native, revision) {
    const listing = new Listing(native, { frozen: true })
    const infos = new Array(listing.length)
    for (let i = 0; i < listing.length; i++) infos[i] = listing.entry(i)
    return { revision, listing, infos, tools: undefined }
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

  #handles(list) {
    const calls = queues.get(this.#native)
    // Keyed by service name: a handle outlives the listing it came from.
    const key = (i) => list.listing.group(i).server
    list.tools ??= mcpTools(list.listing, { calls, native: this.#caller, key })
    return list.tools
  }

  /** Handles for this view's tools only an app's view may see and call: in no model-facing list. */
  appTools() {
    const revision = this._revision()
    if (this.#apps.revision !== revision) {
      const list = this.#read(this.#native.listAppTools(this.#agent), revision)
      this.#apps = { revision, tools: this.#handles(list) }
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
}

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
