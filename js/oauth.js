// `opts.oauth` as the binding calls it: each callback takes a string and resolves JSON
// text, `{ value }` or `{ error }`, so that a host's throw never crosses as an exception.
import { answer } from "./answer.js"

/** `[onAuthorize, tokenStore]` for the binding, each undefined when not given. */
export function bridgeOAuth(oauth) {
  const onAuthorize = oauth?.onAuthorize
  const store = oauth?.tokenStore
  const authorize = onAuthorize && ((url) => answer(() => onAuthorize(new URL(url))))
  const tokens =
    store &&
    ((request) =>
      answer(async () => {
        const { op, key, value } = JSON.parse(request)
        if (op === "get") {
          const stored = await store.get(key)
          return typeof stored === "string" ? stored : null
        }
        await (op === "set" ? store.set(key, value) : store.delete(key))
        return null
      }))
  return [authorize, tokens]
}
