// One tool call as both loadMcp's and the store's Tool handles run it: the AbortSignal
// aborts the native call, onProgress stops once the call settles, and nothing rejects.

/** `onProgress` as native events reach it: nothing is delivered once the call has settled. */
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
 * Runs `start(timeout, onProgress, maxTotalTimeout)`, which starts a native call and returns
 * `{ result, abort }` (a promise of `{ output, isError, content }` and how to abort it),
 * and shapes the outcome as a ToolResult whose metadata starts from `metadata`.
 * `toolName()` gives the server's name for the tool, for a call aborted before it starts.
 * Written with `then` rather than `async`: one promise less on every call.
 */
export function runToolCall(metadata, ctx, toolName, start) {
  const signal = ctx?.signal
  const refused = refusedContext(ctx)
  if (refused) return Promise.resolve(failure(metadata, refused))
  if (signal?.aborted) {
    return Promise.resolve(failure(metadata, `tools/call "${toolName()}" was aborted`))
  }
  const onProgress = ctx?.onProgress && progressListener(ctx.onProgress)
  let call
  try {
    call = start(ctx?.timeout, onProgress, ctx?.maxTotalTimeout)
  } catch (error) {
    return Promise.resolve(failure(metadata, error?.message ?? error))
  }
  signal?.addEventListener("abort", call.abort, { once: true })
  const settled = () => {
    signal?.removeEventListener("abort", call.abort)
    if (onProgress) onProgress.settled = true
  }
  return call.result.then(
    ({ output, isError, content, givenUp }) => {
      settled()
      if (givenUp) {
        // Its progress came faster than this thread took it: the server is told to stop.
        call.abort()
        output = `MCP server "${metadata.server}" sent progress for tools/call "${toolName()}" faster than the host could take it; the call was given up`
        return { output, isError: true, metadata: { ...metadata } }
      }
      return { output, isError, metadata: content ? { ...metadata, content: JSON.parse(content) } : { ...metadata } }
    },
    (error) => {
      settled()
      return failure(metadata, error?.message ?? error)
    },
  )
}

/** Why `ctx` cannot be used, if it cannot: execute answers that, as it never throws. */
function refusedContext(ctx) {
  if (ctx?.signal != null && typeof ctx.signal.addEventListener !== "function") {
    return "ctx.signal must be an AbortSignal"
  }
  for (const key of ["timeout", "maxTotalTimeout"]) {
    if (ctx?.[key] != null && typeof ctx[key] !== "number") {
      return `ctx.${key} must be a number of milliseconds, got ${typeof ctx[key]}`
    }
  }
  return undefined
}

function failure(metadata, reason) {
  return { output: `MCP server "${metadata.server}": ${reason}`, isError: true, metadata: { ...metadata } }
}

/**
 * The JS side of a native call queue: `wake` gets each batch of events, flat
 * `[id, kind, a, b, c, ...]` (kind 0 an outcome, 1 progress, 2 a call given up, 3 a log
 * message, whose id is the server's name), settles or informs the calls they belong to and
 * hands log messages to `onLog({ server, level, data, text })`, all in the order they came.
 */
export function callQueue(onLog) {
  const pending = new Map() // id → { resolve, onProgress }
  return {
    wake(events) {
      for (let i = 0; i < events.length; i += 5) {
        if (events[i + 1] === 3) {
          onLog?.({ server: events[i], level: events[i + 2], data: events[i + 3], text: events[i + 4] })
          continue
        }
        const call = pending.get(events[i])
        if (call === undefined) continue
        if (events[i + 1] === 0) {
          pending.delete(events[i])
          call.resolve({ output: events[i + 2], isError: events[i + 3], content: events[i + 4] })
        } else if (events[i + 1] === 2) {
          pending.delete(events[i])
          call.resolve({ givenUp: true })
        } else {
          call.onProgress?.({ progress: events[i + 2], total: events[i + 3], message: events[i + 4] })
        }
      }
    },
    /** The outcome of call `id`, whose progress goes to `onProgress`. */
    result(id, onProgress) {
      return new Promise((resolve) => pending.set(id, { resolve, onProgress }))
    },
  }
}

/**
 * Gives an MCP tool its `metadata`: the server and tool names as configured and listed,
 * for hosts that display them (the tool's `name` may be shortened). Not enumerable, so a
 * Tool's own keys stay the contract's.
 */
export function withOrigin(tool, origin) {
  return Object.defineProperty(tool, "metadata", { value: Object.freeze(origin), enumerable: false })
}
