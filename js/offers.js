// What servers offer besides tools, for loadMcp's source and every store view: resources,
// resource templates, prompts, completions, resource subscriptions and skills, with the
// official SDK's names. The native side asks the live session; answers come back as the JSON text
// the server sent.
import { failureError, invalidArgument, nativeCoded } from "./errors.js"
import { traced, tracing } from "./trace.js"

/** The methods of the listings `ask` takes by their short names. */
const LISTINGS = {
  resources: "resources/list",
  resourceTemplates: "resources/templates/list",
  prompts: "prompts/list",
  skills: "skills/list",
}

/** What `cacheMode` may say (see index.d.ts, CacheOptions). */
const CACHE_MODES = new Set(["use", "refresh", "bypass"])

/**
 * `native` (a call into the binding) as a function whose promise resolves the value the
 * binding resolved, or rejects with the failure it resolved in its place, with its code.
 */
const settling =
  (native, isValue) =>
  async (...args) => {
    let outcome
    try {
      outcome = await native(...args)
    } catch (error) {
      throw nativeCoded(error, "TOOLNEXUS_INVALID_ARGUMENT")
    }
    if (isValue(outcome)) return outcome
    throw failureError(outcome)
  }

/**
 * The methods of a source or view over `ask(server, kind, paramsJson?, traceJson?)` (a
 * promise of JSON text, or of `{ code, message }` when it failed; traced, see trace.js),
 * `serverNames()` (the connected servers, in order), `subscribe(server, uri, onText)` (a
 * promise of a native subscription with `unsubscribe()`, or of a failure; `onText` gets
 * each update's params as JSON text) and `attributes(server)` (its span attributes' JSON).
 */
export function offerMethods(rawAsk, serverNames, rawSubscribe, attributes) {
  const settled = settling(rawAsk, (answer) => typeof answer === "string")
  const ask = (server, kind, params) => {
    const otel = tracing()
    if (!otel) return settled(server, kind, params)
    const start = (trace) => settled(server, kind, params, trace)
    return traced(otel, LISTINGS[kind] ?? kind, undefined, start, () => attributes(server))
  }
  const subscribe = settling(rawSubscribe, (subscription) => typeof subscription?.unsubscribe === "function")
  // `options.cacheMode` travels with the params, for the native side to take off; checked
  // here too, for a call that reaches no server.
  const cached = (params, options) => {
    const mode = options?.cacheMode
    if (mode === undefined) return params
    if (!CACHE_MODES.has(mode)) throw invalidArgument(`cacheMode ${JSON.stringify(mode)} is not use, refresh or bypass`)
    return { ...params, cacheMode: mode }
  }
  const list = async (kind, server, options) => {
    const servers = server === undefined || server === null ? serverNames() : [String(server)]
    const params = options?.cacheMode === undefined ? undefined : JSON.stringify(cached({}, options))
    const lists = await Promise.all(
      servers.map(async (name) =>
        JSON.parse(await ask(name, kind, params)).map((entry) => ({ ...entry, server: name })),
      ),
    )
    return lists.flat()
  }
  const request = async (server, method, params) =>
    JSON.parse(await ask(String(server), method, JSON.stringify(params)))
  return {
    listResources: (server, options) => list("resources", server, options),
    listResourceTemplates: (server, options) => list("resourceTemplates", server, options),
    readResource: async (server, uri, options) =>
      request(server, "resources/read", cached({ uri: String(uri) }, options)),
    listPrompts: (server, options) => list("prompts", server, options),
    getPrompt: (server, name, args) =>
      request(
        server,
        "prompts/get",
        args === undefined ? { name: String(name) } : { name: String(name), arguments: args },
      ),
    complete: (server, ref, argument, context) =>
      request(server, "completion/complete", context === undefined ? { ref, argument } : { ref, argument, context }),
    listSkills: (server, options) => list("skills", server, options),
    loadSkill: async (server, skill) => {
      const name = String(server)
      // The entry the skill was loaded from stays here, and each read is checked against it.
      const { entry, ...loaded } = await request(name, "skills/load", { skill: String(skill) })
      let retrieved = 0 // what a "dynamic" skill's reads add up to, held to the size limit
      const readFile = async (path) => {
        const file = await request(name, "skills/read", { entry, path: String(path), retrieved })
        retrieved += file.size
        return file
      }
      return { server: name, ...loaded, readFile }
    },
    subscribeResource: async (server, uri, onUpdate) => {
      if (typeof onUpdate !== "function") throw invalidArgument("subscribeResource: onUpdate must be a function")
      const name = String(server)
      const deliver = (text) => {
        // What the callback throws or rejects with is its own business, never the host's.
        try {
          const answer = onUpdate({ server: name, ...JSON.parse(text) })
          if (typeof answer?.then === "function") answer.then(undefined, () => {})
        } catch {}
      }
      const subscription = await subscribe(name, String(uri), deliver)
      return () => subscription.unsubscribe()
    },
  }
}

/** Gives `target` the methods of `offerMethods(...)`, not enumerable: its own keys stay as they were. */
export function withOffers(target, ask, serverNames, subscribe, attributes) {
  for (const [key, value] of Object.entries(offerMethods(ask, serverNames, subscribe, attributes))) {
    Object.defineProperty(target, key, { value, writable: true, configurable: true })
  }
  return target
}
