// How a host's callback answers the binding: one string of JSON, `{ value }` or
// `{ error }`, so that a host's throw never crosses as an exception (see
// src/binding/oauth.rs `call`). Used by `opts.oauth` and by a host's `StateStore`.

/** Runs `work`; its result as `{ value }` (a string or null), a throw as `{ error }`. */
export async function answer(work) {
  try {
    const value = await work()
    return JSON.stringify({ value: value == null ? null : String(value) })
  } catch (error) {
    return JSON.stringify({ error: error instanceof Error ? error.message : String(error) })
  }
}
