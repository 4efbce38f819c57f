// A tool's members beyond name, description and inputSchema (`title`, `annotations`,
// `outputSchema`, `icons`, `execution`, `_meta`), as the server sent them. Only tools that
// have some get them, as own enumerable properties parsed when first read: a tool without
// them keeps exactly the keys it always had, and a large listing pays nothing until read.

const INDEX = Symbol("toolnexus.extraIndex")

/**
 * Returns `define(object, index, keys)`, which gives `object` the members named in `keys`,
 * read from the JSON object text `extraJson(index)` (fetched and parsed once per index,
 * when one of them is first read). Assigning one replaces it with a plain value. The
 * accessors are shared by every object given one here.
 */
export function lazyExtras(extraJson, freeze = (value) => value) {
  const parsed = []
  const descriptors = new Map()
  const descriptor = (key) => ({
    get() {
      const index = this[INDEX]
      return (parsed[index] ??= freeze(JSON.parse(extraJson(index) ?? "{}")))[key]
    },
    set(value) {
      Object.defineProperty(this, key, { value, writable: true, enumerable: true, configurable: true })
    },
    enumerable: true,
    configurable: true,
  })
  return (object, index, keys) => {
    Object.defineProperty(object, INDEX, { value: index })
    for (const key of keys) {
      if (!descriptors.has(key)) descriptors.set(key, descriptor(key))
      Object.defineProperty(object, key, descriptors.get(key))
    }
    return object
  }
}
