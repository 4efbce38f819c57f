// A listing of tools as the binding hands it over (`NativeListing`), the same for loadMcp,
// listMcpTools and a store view, and the one way what is made from it (a listed entry, a
// Tool handle) reads its schema and the members beyond the first three: through accessors
// shared by every such object, each object knowing only its listing and its number, and
// each value parsed when first read (most of a large listing never is).
import { APP_ONLY } from "./visibility.js"

/**
 * Freezes `root` and everything reachable from it (plain JSON data only). Iterative: a
 * schema may nest deeper than the call stack goes.
 */
function deepFreeze(root) {
  const pending = [root]
  while (pending.length > 0) {
    const value = pending.pop()
    if (value === null || typeof value !== "object" || Object.isFrozen(value)) continue
    Object.freeze(value)
    for (const key of Object.keys(value)) pending.push(value[key])
  }
  return root
}

/** Returns `object` from a base constructor, so that a subclass stamps its fields on it. */
class Stamp {
  constructor(object) {
    if (object !== undefined) return object
  }
}

/**
 * What an object made from a listing knows of it, in private fields: invisible to
 * reflection and to `deepStrictEqual`, and set by a plain store where a hidden property
 * defined one by one cost as much as the rest of the object. `new Listed(object, ...)`
 * stamps a plain object; a class of handles extends it.
 */
export class Listed extends Stamp {
  #listing
  #i
  constructor(object, listing, i) {
    super(object)
    this.#listing = listing
    this.#i = i
  }
  static listing(object) {
    return object !== null && typeof object === "object" && #listing in object ? object.#listing : undefined
  }
  static at(object) {
    return object.#i
  }
}

/** `inputSchema`: own and enumerable, so spreading or JSON.stringify sees it. */
const SCHEMA = {
  get() {
    return Listed.listing(this)?.schema(Listed.at(this))
  },
  set(value) {
    Listed.listing(this)?.setSchema(Listed.at(this), value)
  },
  enumerable: true,
  configurable: true,
}
const FROZEN_SCHEMA = { get: SCHEMA.get, enumerable: true, configurable: true }

// The accessors of the members beyond the first three, by key: [settable, frozen].
const members = new Map()
function memberAccessor(key, frozen) {
  let pair = members.get(key)
  if (!pair) {
    const get = function () {
      return Listed.listing(this)?.extras(Listed.at(this))[key]
    }
    // Assigning one replaces it with a plain value.
    const set = function (value) {
      Object.defineProperty(this, key, { value, writable: true, enumerable: true, configurable: true })
    }
    pair = [
      { get, set, enumerable: true, configurable: true },
      { get, enumerable: true, configurable: true },
    ]
    members.set(key, pair)
  }
  return pair[frozen ? 1 : 0]
}

/**
 * One native listing, parsed: `groups` (`{ server, clientId, maxOutputChars }`, clientId
 * and maxOutputChars `null` when none) and, per tool number, its name, description, the
 * name its server knows it by, its group, its extra members, and whether it is deferred
 * or only an app's view may see it. A `frozen` listing (a store's) freezes what it parses.
 */
export class Listing {
  #native
  #frozen
  #tools
  #groupOf
  #extraKeys = []
  #schemas = []
  #replaced = []
  #extras = []
  #deferred
  #app
  #metadata = new Map()

  constructor(native, { frozen = false } = {}) {
    this.#native = native
    this.#frozen = frozen
    // Flat arrays (see `NativeListing.json`): an array per tool was a fifth of the garbage
    // a large listing leaves.
    const { groups, tools, extras, deferred, app } = JSON.parse(native.json())
    this.#tools = tools
    this.length = tools.length / 3
    this.groups = groups.map(([server, clientId, , maxOutputChars]) => ({ server, clientId, maxOutputChars }))
    this.#groupOf = new Uint32Array(this.length)
    let i = 0
    groups.forEach(([, , size], g) => this.#groupOf.fill(g, i, (i += size)))
    for (let n = 0; n < extras.length; n += 2) this.#extraKeys[extras[n]] = extras[n + 1]
    this.#deferred = new Set(deferred)
    this.#app = new Set(app)
  }

  get frozen() {
    return this.#frozen
  }
  name(i) {
    return this.#tools[3 * i]
  }
  description(i) {
    return this.#tools[3 * i + 1]
  }
  group(i) {
    return this.groups[this.#groupOf[i]]
  }
  /** The name its server knows tool `i` by (`null` in the listing: after the server's name and `_`). */
  target(i) {
    return this.#tools[3 * i + 2] ?? this.name(i).slice(this.group(i).server.length + 1)
  }
  isApp(i) {
    return this.#app.has(i)
  }

  schema(i) {
    if (this.#schemas[i] === undefined) {
      const schema = JSON.parse(this.#native.inputSchema(i))
      this.#schemas[i] = this.#frozen ? deepFreeze(schema) : schema
    }
    return this.#schemas[i]
  }
  setSchema(i, value) {
    this.#schemas[i] = value
    this.#replaced[i] = true
  }
  /** Tool `i`'s schema as JSON text, as listed unless it was replaced. */
  schemaText(i) {
    return this.#replaced[i] ? JSON.stringify(this.#schemas[i]) : this.#native.inputSchema(i)
  }
  /** The length of all the schemas' JSON texts together. */
  schemaChars() {
    return this.#native.schemaChars()
  }
  extras(i) {
    if (this.#extras[i] === undefined) {
      const extras = JSON.parse(this.#native.extra(i) ?? "{}")
      this.#extras[i] = this.#frozen ? deepFreeze(extras) : extras
    }
    return this.#extras[i]
  }
  extraText(i) {
    return this.#native.extra(i) ?? undefined
  }

  /** The `metadata` a result of tool `i` starts from: `{ server, clientId? }`, one per server. */
  resultMetadata(i) {
    const { server, clientId } = this.group(i)
    let metadata = this.#metadata.get(server)
    if (!metadata) {
      metadata = Object.freeze(clientId === null ? { server } : { server, clientId })
      this.#metadata.set(server, metadata)
    }
    return metadata
  }

  /** Tool `i`'s `metadata`: its names as configured and listed, and what the adapters read of its entry. */
  origin(i) {
    const { server, clientId, maxOutputChars } = this.group(i)
    const origin = { server, tool: this.target(i) }
    if (clientId !== null) origin.clientId = clientId
    if (maxOutputChars !== null) origin.maxOutputChars = maxOutputChars
    if (this.#deferred.has(i)) origin.deferLoading = true
    return Object.freeze(origin)
  }

  /**
   * Gives `object` (stamped with this listing and number `i`) its `inputSchema` and its
   * members beyond the first three, as accessors.
   */
  readsThrough(object, i) {
    Object.defineProperty(object, "inputSchema", this.#frozen ? FROZEN_SCHEMA : SCHEMA)
    const keys = this.#extraKeys[i]
    if (keys !== undefined)
      for (const key of keys) Object.defineProperty(object, key, memberAccessor(key, this.#frozen))
  }

  /**
   * Entry number `i` as a listing shows it: `{ name, description, inputSchema, ...extra }`,
   * then a store's `serviceName` and `clientId`, or `visibility` when only an app's view
   * may see it; frozen in a frozen listing.
   */
  entry(i) {
    const info = new Listed({ name: this.#tools[3 * i], description: this.#tools[3 * i + 1] }, this, i)
    this.readsThrough(info, i)
    // As `own(i)` says, without making its object: a store lists thousands at its start.
    const { server, clientId } = this.groups[this.#groupOf[i]]
    if (clientId !== null) {
      info.serviceName = server
      info.clientId = clientId
    }
    if (this.#app.has(i)) info.visibility = APP_ONLY
    return this.#frozen ? Object.freeze(info) : info
  }

  /** The fields after the listed members that the entry point adds (undefined: none). */
  own(i) {
    const { server, clientId } = this.group(i)
    const store = clientId === null ? undefined : { serviceName: server, clientId }
    if (!this.isApp(i)) return store
    return { ...store, visibility: APP_ONLY }
  }
}

/** The JSON text of `tool.inputSchema`: as listed where it was, else stringified. */
export function schemaJson(tool) {
  const listing = Listed.listing(tool)
  return listing ? listing.schemaText(Listed.at(tool)) : JSON.stringify(tool.inputSchema)
}

/** The JSON object text of a listed object's `title`, `annotations`, ... (undefined: none). */
export function extraJson(tool) {
  return Listed.listing(tool)?.extraText(Listed.at(tool))
}
