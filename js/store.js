// Store mode: a long-lived set of MCP servers, connected in the background, listed from
// memory and kept current. The native `NativeStore` owns every connection, state and
// restart; each view (js/store-view.js) turns its answers into frozen objects.
import * as native from "../binding.js"
import { callQueue } from "./call.js"
import { configSource } from "./config-source.js"
import { bridgeOAuth } from "./oauth.js"
import { bridgeState, tellUnsharedSignIns } from "./state.js"
import { fromNative, invalidArgument } from "./errors.js"
import { INVALID_CONFIG, STORE, View, queues } from "./store-view.js"

const storeOptions = (opts) => {
  const out = {}
  for (const key of ["waitLocalMs", "waitRemoteMs", "maxRestarts", "backoffMs", "backoffMaxMs"]) {
    const value = opts?.[key]
    if (value === undefined) continue
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw invalidArgument(`createMcpStore: ${key} must be a non-negative number, got ${JSON.stringify(value)}`)
    }
    out[key] = Math.floor(value)
  }
  for (const key of ["lazy", "catalog", "elicitation"]) {
    const value = opts?.[key]
    if (value === undefined) continue
    if (typeof value !== "boolean") {
      throw invalidArgument(`createMcpStore: ${key} must be a boolean, got ${JSON.stringify(value)}`)
    }
    out[key] = value
  }
  if (opts?.catalogDir !== undefined) {
    if (typeof opts.catalogDir !== "string" || opts.catalogDir === "") {
      throw invalidArgument(
        `createMcpStore: catalogDir must be a non-empty string, got ${JSON.stringify(opts.catalogDir)}`,
      )
    }
    out.catalogDir = opts.catalogDir
  }
  return out
}

/**
 * Registers `listeners` with the native store. The native side holds the callback through
 * a threadsafe function, a GC root for as long as the store lives, so the callback reaches
 * `listeners` (and through them the store) only weakly, from a scope that holds nothing
 * else: otherwise no store with a listener could ever be freed.
 */
function listenWeakly(nativeStore, listeners) {
  const ref = new WeakRef(listeners)
  nativeStore.onChange((version) => ref.deref()?.fire(version))
}

/** Change listeners: one native listener, registered on the first `onChange`. */
class Listeners {
  #native
  #entries = new Set() // { view, listener, revision }
  #registered = false

  constructor(nativeStore) {
    this.#native = nativeStore
  }

  subscribe(view, listener) {
    const entry = { view, listener, revision: view._revision() }
    this.#entries.add(entry)
    if (!this.#registered) {
      this.#registered = true
      listenWeakly(this.#native, this)
    }
    return () => {
      this.#entries.delete(entry)
    }
  }

  fire(version) {
    for (const entry of [...this.#entries]) {
      if (!this.#entries.has(entry)) continue
      // The store view sees every change; an agent view only those of its own services.
      if (entry.view.agentId !== null) {
        const revision = entry.view._revision()
        if (revision === entry.revision) continue
        entry.revision = revision
      }
      try {
        entry.listener(version)
      } catch {}
    }
  }

  clear() {
    this.#entries.clear()
  }
}

class McpStore extends View {
  #native
  // Agent views by id, each held weakly: a host that makes a view per passing agent and
  // drops it would otherwise keep every view, and the listing it cached, for the store's
  // life. A view still referenced (by the host or by its change listeners) stays the one
  // forAgent returns.
  #views = new Map() // id → WeakRef<View>
  #collected = new FinalizationRegistry((id) => {
    if (this.#views.get(id)?.deref() === undefined) this.#views.delete(id)
  })
  #listeners
  #closing

  constructor(nativeStore) {
    super(null, nativeStore, null)
    this.#native = nativeStore
    this.#listeners = new Listeners(nativeStore)
  }

  get [STORE]() {
    return this.#listeners
  }

  /** The store's change counter: bumped whenever any server's tools or state change. */
  get version() {
    return this.#native.version()
  }

  /** The store view: every service under its global name. */
  forStore() {
    return this
  }

  /** The view of agent `id`: only its own services, under their local names. */
  forAgent(id) {
    if (typeof id !== "string" || id === "") throw invalidArgument("forAgent: the agent id must be a non-empty string")
    let view = this.#views.get(id)?.deref()
    if (!view) {
      view = new View(this, this.#native, id)
      this.#views.set(id, new WeakRef(view))
      this.#collected.register(view, id)
    }
    return view
  }

  /** Whether the shared state answers: `{ status, reason?, namespace?, signIns? }`. */
  sharedState() {
    const { status, reason, namespace, signIns } = this.#native.sharedState()
    const out = { status }
    if (reason != null) out.reason = reason
    if (namespace != null) out.namespace = namespace
    if (signIns != null) out.signIns = signIns
    return Object.freeze(out)
  }

  /** The live instances of this store's fleet (only this one without a shared state). */
  async instances() {
    return JSON.parse(await this.#native.instances())
  }

  /** Ends every connection and kills every server process tree. Idempotent. */
  close() {
    this.#closing ??= (async () => {
      this.#listeners.clear()
      await this.#native.close()
    })()
    return this.#closing
  }
}

/**
 * Creates a store and starts connecting every enabled server of `input` (a path to an
 * mcp.json, a parsed config object, or nothing for an empty store) in the background.
 * Returns at once; throws only when the config as a whole is unusable.
 */
export function createMcpStore(input, opts) {
  const source = input === undefined || input === null ? null : configSource(input)
  const calls = callQueue()
  const [state, stateStore] = bridgeState(opts?.state, "createMcpStore")
  const options = { ...storeOptions(opts), state }
  const nativeStore = fromNative(
    () => new native.NativeStore(source, options, calls.wake, ...bridgeOAuth(opts?.oauth), stateStore),
    INVALID_CONFIG,
  )
  tellUnsharedSignIns([state])
  queues.set(nativeStore, calls)
  // Servers spawn a turn later: the catalog lists their tools meanwhile, a call waits for
  // its server as during a restart, and the caller's synchronous start is not slowed.
  setImmediate(() => nativeStore.start())
  return new McpStore(nativeStore)
}
