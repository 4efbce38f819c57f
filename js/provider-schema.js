// Tool schemas made for one model provider. The work is native (src/provider_schema/);
// here each schema is made once per profile and kept while its schema object lives.
import { ProviderSchema } from "../binding.js"
import { fromNative } from "./errors.js"

const made = new WeakMap() // schema object → Map(profile → Profiled)

/** A schema made for `profile`, with what is needed to call the tool with the model's arguments. */
class Profiled {
  constructor(native) {
    this.schema = JSON.parse(native.schema)
    this.strict = native.strict
    this.native = native.forcesNulls ? native : undefined
  }

  /** The model's arguments without the nulls strict mode forced in for omitted properties. */
  restore(args) {
    if (this.native === undefined || args == null || typeof args !== "object") return args
    const json = JSON.stringify(args)
    return JSON.parse(fromNative(() => this.native.restoreArguments(json), "TOOLNEXUS_INVALID_ARGUMENT"))
  }
}

const isTool = (x) => x != null && typeof x === "object" && typeof x.execute === "function"

/** The `Profiled` schema of a tool or a schema object, made once. */
export function profiled(schemaOrTool, profile) {
  const schema = isTool(schemaOrTool) ? schemaOrTool.inputSchema : schemaOrTool
  const key = schema != null && typeof schema === "object" ? schema : undefined
  const cached = key && made.get(key)?.get(profile)
  if (cached) return cached
  const json = JSON.stringify(schema ?? {})
  const native = fromNative(() => new ProviderSchema(json, String(profile)), "TOOLNEXUS_INVALID_ARGUMENT")
  const entry = new Profiled(native)
  if (key) {
    if (!made.has(key)) made.set(key, new Map())
    made.get(key).set(profile, entry)
  }
  return entry
}

export function providerSchema(schemaOrTool, profile = "portable") {
  return profiled(schemaOrTool, profile).schema
}
