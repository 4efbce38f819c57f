// `opts.state` as the binding takes it: `{ url, namespace, key }`, the key from
// TOOLNEXUS_STATE_KEY when the option names none. A store without a key says once, at
// start, that its sign-ins stay on this host.
import { report } from "./notices.js"

/** The native form of `state` for `what` (the API named in errors), or undefined. */
export function nativeState(state, what) {
  if (state === undefined || state === null) return undefined
  const options = typeof state === "string" ? { url: state } : state
  if (typeof options !== "object") {
    throw new TypeError(`${what}: state must be a Redis URL or { url, namespace?, key? }, got ${typeof state}`)
  }
  if (typeof options.get === "function" || options.store !== undefined) {
    throw new TypeError(`${what}: a StateStore of your own is not supported yet; give a Redis or Valkey URL`)
  }
  if (typeof options.url !== "string" || options.url === "") {
    throw new TypeError(`${what}: state.url must be a redis:// or rediss:// URL`)
  }
  for (const name of ["namespace", "key"]) {
    if (options[name] !== undefined && typeof options[name] !== "string") {
      throw new TypeError(`${what}: state.${name} must be a string`)
    }
  }
  const key = options.key ?? process.env.TOOLNEXUS_STATE_KEY
  return { url: options.url, namespace: options.namespace, key: key || undefined }
}

/** Says, once per process, that sign-ins are not shared without a key. */
let told = false
export function tellUnsharedSignIns(native) {
  if (told || !native || native.key) return
  told = true
  report([
    "sign-ins are not shared by the fleet's state: no key to encrypt them with (set TOOLNEXUS_STATE_KEY to 64 hex digits, or give state.key); they stay in this host's token store",
  ])
}
