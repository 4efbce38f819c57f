// Errors a program can branch on: every rejection and throw of toolnexus's own carries a
// stable `code` (the README's table), set from the failure's type, never its words.

/** `error`, given `code`; its class and message stay as they are. */
export function coded(error, code) {
  error.code = code
  return error
}

/** A TypeError for an argument that cannot be used. */
export const invalidArgument = (message) => coded(new TypeError(message), "TOOLNEXUS_INVALID_ARGUMENT")

/**
 * Runs `fn`, a call into the binding, and gives what it throws its code: the binding's
 * `InvalidArg` means the input named by `invalid` (a config, an argument); anything else
 * is toolnexus's own failure.
 */
export function fromNative(fn, invalid) {
  try {
    return fn()
  } catch (error) {
    throw nativeCoded(error, invalid)
  }
}

/** What the binding threw or rejected with, given its code (see `fromNative`). */
export function nativeCoded(error, invalid) {
  if (error instanceof Error && !String(error.code ?? "").startsWith("TOOLNEXUS_")) {
    coded(error, error.code === "InvalidArg" ? invalid : "TOOLNEXUS_INTERNAL")
  }
  return error
}

/** An Error from the binding's `{ code, message }`, for a failure it resolves rather than throws. */
export const failureError = ({ code, message }) => coded(new Error(message), code)
