// `opts.state` as the binding takes it: `[{ url, namespace, key }, store]`, the key from
// TOOLNEXUS_STATE_KEY when the option names none, and a host's own `StateStore` bridged
// as one function of JSON text that never rejects (see src/binding/state_store.rs). A
// store without a key says once, at start, that its sign-ins stay on this host.
import { report } from "./notices.js"
import { answer } from "./answer.js"
import { invalidArgument } from "./errors.js"

/** How long one `next` of a subscription waits for messages before answering none. */
const NEXT_MS = 1_000
const OPS = ["get", "set", "delete", "compareAndSet", "publish", "subscribe"]

const isStateStore = (value) => OPS.every((op) => typeof value?.[op] === "function")

/** `[native, store]` for the binding from `state` (`what` names the API in errors); `[]` without one. */
export function bridgeState(state, what) {
  if (state === undefined || state === null) return []
  const options = typeof state === "string" ? { url: state } : isStateStore(state) ? { store: state } : state
  if (typeof options !== "object") {
    throw invalidArgument(`${what}: state must be a Redis URL, { url | store, namespace?, key? } or a StateStore`)
  }
  if (options.store !== undefined && !isStateStore(options.store)) {
    throw invalidArgument(`${what}: state.store must have ${OPS.join(", ")}`)
  }
  if (options.store === undefined && (typeof options.url !== "string" || options.url === "")) {
    throw invalidArgument(`${what}: state.url must be a redis:// or rediss:// URL`)
  }
  for (const name of ["namespace", "key"]) {
    if (options[name] !== undefined && typeof options[name] !== "string") {
      throw invalidArgument(`${what}: state.${name} must be a string`)
    }
  }
  const key = options.key ?? process.env.TOOLNEXUS_STATE_KEY
  const native = { url: options.store ? undefined : options.url, namespace: options.namespace, key: key || undefined }
  return [native, options.store && bridgeStore(options.store)]
}

/** The binding's one function over a host's `StateStore`. */
function bridgeStore(store) {
  // Per channel: its messages not yet pulled, the pull waiting for one, the unsubscribe.
  const channels = new Map()
  const next = (channel) =>
    new Promise((resolve) => {
      const feed = channels.get(channel)
      if (!feed) return resolve("[]")
      const take = () => {
        clearTimeout(timer)
        feed.wake = undefined
        resolve(JSON.stringify(feed.queue.splice(0)))
      }
      const timer = setTimeout(take, NEXT_MS).unref()
      if (feed.queue.length > 0) take()
      else feed.wake = take
    })
  const ops = {
    get: ({ key }) => store.get(key).then((v) => (typeof v === "string" ? v : null)),
    set: ({ key, value, ttlMs }) => store.set(key, value, ttlMs ?? undefined),
    delete: ({ key }) => store.delete(key),
    compareAndSet: ({ key, expected, value, ttlMs }) =>
      store.compareAndSet(key, expected ?? null, value ?? null, ttlMs ?? undefined).then((done) => done === true),
    publish: ({ channel, message }) => store.publish(channel, message),
    subscribe: async ({ channel }) => {
      const feed = { queue: [], wake: undefined, stop: undefined }
      channels.get(channel)?.stop?.()
      channels.set(channel, feed)
      feed.stop = await store.subscribe(channel, (message) => {
        // A slow reader drops the oldest news: followers read the state again on a rejoin.
        if (feed.queue.length >= 1024) feed.queue.shift()
        feed.queue.push(String(message))
        feed.wake?.()
      })
    },
    next: ({ channel }) => next(channel),
    unsubscribe: async ({ channel }) => {
      const feed = channels.get(channel)
      channels.delete(channel)
      await feed?.stop?.()
    },
  }
  return (request) =>
    answer(() => {
      const parsed = JSON.parse(request)
      return ops[parsed.op](parsed)
    })
}

/** Says, once per process, that sign-ins are not shared without a key. */
let told = false
export function tellUnsharedSignIns([native] = []) {
  if (told || !native || native.key) return
  told = true
  report([
    "sign-ins are not shared by the fleet's state: no key to encrypt them with (set TOOLNEXUS_STATE_KEY to 64 hex digits, or give state.key); they stay in this host's token store",
  ])
}
