// A store view's listed entries (StoreToolInfo) as the JS layer makes them from a native
// listing: plain frozen objects whose schema and extra members are read, and parsed,
// only when used.

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

/**
 * The hidden side of one listing's entries: where their schemas' and extra members' JSON
 * texts are, and the values once parsed. Its accessors, shared by all of its entries
 * (an accessor made per entry would give each entry a shape of its own), find an entry
 * by its name, unique in a listing; nothing is kept on the entries themselves: defining
 * hidden fields on each of a 5,000-tool listing's entries cost as much as the rest of
 * making them. The schema's text stays in the native listing until it is read.
 */
export class Listed {
  #listing
  #infos
  #extras = []
  #byName
  #schemas = []
  #parsedExtras = []
  #accessors = new Map()
  constructor(listing, infos) {
    this.#listing = listing
    this.#infos = infos
    const listed = this
    // Enumerable, so spreading and JSON.stringify see the values.
    this.schemaAccessor = {
      get() {
        const i = listed.#at(this)
        return i === undefined
          ? undefined
          : (listed.#schemas[i] ??= deepFreeze(JSON.parse(listed.#listing.inputSchema(i))))
      },
      enumerable: true,
    }
    owners.set(this.schemaAccessor.get, this)
  }

  /**
   * Entry number `i`: a frozen StoreToolInfo, `{ name, description, inputSchema, ...extra,
   * serviceName, clientId }`, whose schema and extra members are parsed (and frozen) when
   * first read: most of a large listing never is, and a schema nested too deep to walk
   * recursively costs nothing until then.
   */
  entry(i, name, description, serviceName, clientId, extraKeys, extra) {
    const info = { name, description }
    Object.defineProperty(info, "inputSchema", this.schemaAccessor)
    if (extraKeys) {
      this.#extras[i] = extra
      for (const key of extraKeys) Object.defineProperty(info, key, this.#extraAccessor(key))
    }
    info.serviceName = serviceName
    info.clientId = clientId
    return Object.freeze(info)
  }

  #extraAccessor(key) {
    let accessor = this.#accessors.get(key)
    if (!accessor) {
      const listed = this
      const get = function () {
        const i = listed.#at(this)
        return i === undefined
          ? undefined
          : (listed.#parsedExtras[i] ??= deepFreeze(JSON.parse(listed.#extras[i])))[key]
      }
      accessor = { get, enumerable: true }
      this.#accessors.set(key, accessor)
    }
    return accessor
  }

  /** The number of `entry` in the listing, looked up by its name. */
  #at(entry) {
    this.#byName ??= new Map(this.#infos.map((info, i) => [info.name, i]))
    const i = this.#byName.get(entry?.name)
    return this.#infos[i] === entry ? i : undefined
  }

  static of(entry) {
    return owners.get(Object.getOwnPropertyDescriptor(entry, "inputSchema")?.get)
  }
  schemaText(entry) {
    const i = this.#at(entry)
    return i === undefined ? undefined : this.#listing.inputSchema(i)
  }
  extraText(entry) {
    const i = this.#at(entry)
    return i === undefined ? undefined : this.#extras[i]
  }
}
// Each listing's schema getter → the listing: how an entry's texts are found from it.
const owners = new WeakMap()

/** The JSON text of `tool.inputSchema`: as listed for store entries, else stringified. */
export function schemaJson(tool) {
  return Listed.of(tool)?.schemaText(tool) ?? JSON.stringify(tool.inputSchema)
}

/** The JSON object text of a listed entry's `title`, `annotations`, ... (undefined: none). */
export function extraJson(tool) {
  return Listed.of(tool)?.extraText(tool)
}
