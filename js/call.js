// One native tool call as both loadMcp's and the store's Tool handles run it: the
// AbortSignal becomes a native cancellation, onProgress stops once the call settles, and
// nothing ever rejects.
import * as native from "../binding.js"

/** `onProgress` as the binding calls it: nothing is delivered once the call has settled. */
function progressListener(onProgress) {
  const listener = (event) => {
    if (listener.settled) return
    try {
      onProgress({ progress: event.progress, total: event.total ?? undefined, message: event.message ?? undefined })
    } catch {}
  }
  listener.settled = false
  return listener
}

/**
 * Runs `call(timeout, canceller, onProgress)` (a native callTool) with `ctx`, and shapes its
 * result as a ToolResult whose metadata starts from `metadata` (`server` first of all).
 */
export async function runToolCall(metadata, ctx, call) {
  const signal = ctx?.signal
  if (signal?.aborted) {
    return { output: `MCP server "${metadata.server}": tools/call was aborted`, isError: true, metadata: { ...metadata } }
  }
  const canceller = signal && new native.Canceller()
  const onAbort = () => canceller.cancel()
  signal?.addEventListener("abort", onAbort, { once: true })
  const onProgress = ctx?.onProgress && progressListener(ctx.onProgress)
  try {
    const { output, isError, content } = await call(ctx?.timeout, canceller, onProgress)
    return { output, isError, metadata: content ? { ...metadata, content: JSON.parse(content) } : { ...metadata } }
  } catch (error) {
    return { output: `MCP server "${metadata.server}": ${error?.message ?? error}`, isError: true, metadata: { ...metadata } }
  } finally {
    signal?.removeEventListener("abort", onAbort)
    if (onProgress) onProgress.settled = true
  }
}
