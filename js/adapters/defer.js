// The adapters' `defer` option: which tools the provider's own tool search loads on demand
// (`defer_loading`) instead of sending their schemas with every request.
import { invalidArgument } from "../errors.js"

/**
 * A predicate of tools from `opts.defer` (`true`: every tool; a function: those it picks),
 * or undefined for none. Without the option, the tools whose server's entry says
 * `deferLoading` (less those it `alwaysLoad`s) are deferred.
 */
export function deferral(opts) {
  const defer = opts?.defer
  if (defer === undefined) return (tool) => tool?.metadata?.deferLoading === true
  if (defer === false) return undefined
  if (defer === true) return () => true
  if (typeof defer === "function") return (tool) => Boolean(defer(tool))
  throw invalidArgument("defer must be true, false or a function of a tool")
}
