// What servers offer besides tools, for loadMcp's source and every store view: resources,
// resource templates, prompts, completions and resource subscriptions, with the official
// SDK's names. The native side asks the live session; answers come back as the JSON text
// the server sent.
import { failureError, invalidArgument, nativeCoded } from "./errors.js"
import { traced, tracing } from "./trace.js"

/** The methods of the listings `ask` takes by their short names. */
const LISTINGS = { resources: "resources/list", resourceTemplates: "resources/templates/list", prompts: "prompts/list" }

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
 * promise of JSON text, or of `{ code, message }` when it failed; traced, see trace.js), `serverNames()` (the connected
 * servers, in order) and `subscribe(server, uri, onText)` (a promise of a native
 * subscription with `unsubscribe()`, or of a failure; `onText` gets each update's params
 * as JSON text).
 */
export function offerMethods(rawAsk, serverNames, rawSubscribe) {
  const settled = settling(rawAsk, (answer) => typeof answer === "string")
  const ask = (server, kind, params) => {
    const otel = tracing()
    if (!otel) return settled(server, kind, params)
    return traced(otel, LISTINGS[kind] ?? kind, undefined, (trace) => settled(server, kind, params, trace))
  }
  const subscribe = settling(rawSubscribe, (subscription) => typeof subscription?.unsubscribe === "function")
  const list = async (kind, server) => {
    const servers = server === undefined ? serverNames() : [String(server)]
    const lists = await Promise.all(
      servers.map(async (name) => JSON.parse(await ask(name, kind)).map((entry) => ({ ...entry, server: name }))),
    )
    return lists.flat()
  }
  const request = async (server, method, params) =>
    JSON.parse(await ask(String(server), method, JSON.stringify(params)))
  return {
    listResources: (server) => list("resources", server),
    listResourceTemplates: (server) => list("resourceTemplates", server),
    readResource: (server, uri) => request(server, "resources/read", { uri: String(uri) }),
    listPrompts: (server) => list("prompts", server),
    getPrompt: (server, name, args) =>
      request(
        server,
        "prompts/get",
        args === undefined ? { name: String(name) } : { name: String(name), arguments: args },
      ),
    complete: (server, ref, argument, context) =>
      request(server, "completion/complete", context === undefined ? { ref, argument } : { ref, argument, context }),
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
export function withOffers(target, ask, serverNames, subscribe) {
  for (const [key, value] of Object.entries(offerMethods(ask, serverNames, subscribe))) {
    Object.defineProperty(target, key, { value, writable: true, configurable: true })
  }
  return target
}
