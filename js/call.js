// One tool call as both loadMcp's and the store's Tool handles run it: the AbortSignal
// aborts the native call, onProgress stops once the call settles, and nothing rejects.
import { abortedCall, progressGivenUp } from "../binding.js"
import { traced, tracing } from "./trace.js"

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
 * Runs a call of `target` (the server's name for the tool) with `args`, and shapes its
 * outcome as a ToolResult whose metadata starts from `metadata`. `calls` is the source's
 * call queue; `native.start(key, target, argsJson, timeout, wantsProgress, maxTotalTimeout, task, trace)`
 * starts the native call and returns its id, `native.abort(key, id)` aborts it,
 * `native.attributes(key)` gives its server's span attributes (see js/trace.js). One object and
 * one promise per call: a plain call makes no closure, as 64 calls in flight make this the
 * JS thread's hot path (a traced one does: see js/trace.js).
 */
export function runToolCall(calls, native, key, metadata, target, args, ctx) {
  const otel = tracing()
  if (!otel) return startToolCall(calls, native, key, metadata, target, args, ctx, undefined)
  return traced(
    otel,
    "tools/call",
    target,
    (trace) => startToolCall(calls, native, key, metadata, target, args, ctx, trace),
    () => native.attributes(key),
  )
}

function startToolCall(calls, native, key, metadata, target, args, ctx, trace) {
  if (ctx != null) {
    const refused = refusedContext(ctx)
    if (refused) return Promise.resolve(failure(metadata, refused, INVALID_ARGUMENT))
    if (ctx.signal?.aborted) return Promise.resolve(failed(metadata, abortedCall(metadata.server, target), ABORTED))
  }
  const onProgress = ctx?.onProgress && progressListener(ctx.onProgress)
  let json
  try {
    json = JSON.stringify(args ?? {})
  } catch (error) {
    return Promise.resolve(failure(metadata, error?.message ?? error, INVALID_ARGUMENT))
  }
  let id
  try {
    id = native.start(
      key,
      target,
      json,
      ctx?.timeout,
      onProgress !== undefined,
      ctx?.maxTotalTimeout,
      ctx?.task === true,
      trace,
    )
  } catch (error) {
    return Promise.resolve(failure(metadata, error?.message ?? error, INTERNAL))
  }
  return calls.expect(new Call(id, native, key, metadata, target, onProgress, ctx?.signal))
}

/** A call in flight, as the call queue settles it; the AbortSignal's listener too. */
class Call {
  constructor(id, native, key, metadata, target, onProgress, signal) {
    this.id = id
    this.native = native
    this.key = key
    this.metadata = metadata
    this.target = target
    this.onProgress = onProgress
    this.signal = signal
    this.resolve = undefined
    signal?.addEventListener("abort", this, { once: true })
  }

  /** The signal fired. */
  handleEvent() {
    this.native.abort(this.key, this.id)
  }

  /** `structured`: `output` is the result's `structuredContent`, as JSON text. */
  done(output, isError, content, structured) {
    this.#settled()
    const metadata = this.metadata
    try {
      const resultMetadata = content ? { ...metadata, content: JSON.parse(content) } : { ...metadata }
      if (structured) resultMetadata.structuredContent = JSON.parse(output)
      this.resolve({ output, isError, metadata: resultMetadata })
    } catch (error) {
      this.resolve(failure(metadata, error?.message ?? error, INTERNAL))
    }
  }

  /** A failure toolnexus composed, with its code. */
  failed(output, code) {
    this.#settled()
    this.resolve(failed(this.metadata, output, code))
  }

  /** Its progress came faster than this thread took it: the server is told to stop. */
  givenUp() {
    this.#settled()
    this.native.abort(this.key, this.id)
    this.resolve(failed(this.metadata, progressGivenUp(this.metadata.server, this.target), "TOOLNEXUS_OVERWHELMED"))
  }

  #settled() {
    this.signal?.removeEventListener("abort", this)
    if (this.onProgress) this.onProgress.settled = true
  }
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
  if (ctx?.task != null && typeof ctx.task !== "boolean") {
    return `ctx.task must be a boolean, got ${typeof ctx.task}`
  }
  return undefined
}

const INVALID_ARGUMENT = "TOOLNEXUS_INVALID_ARGUMENT"
const ABORTED = "TOOLNEXUS_ABORTED"
const INTERNAL = "TOOLNEXUS_INTERNAL"

/** A failed call's result, `output` a sentence the binding worded, with its code. */
function failed(metadata, output, code) {
  return { output, isError: true, metadata: { ...metadata, code } }
}

function failure(metadata, reason, code) {
  return failed(metadata, `MCP server "${metadata.server}": ${reason}`, code)
}

/**
 * The JS side of a native call queue: `wake` gets each batch of events, flat
 * `[id, kind, a, b, c, ...]` (kind 0 an outcome, 4 one whose output is its structured
 * content, 5 a failure toolnexus composed with its code, 1 progress, 2 a call given up,
 * 3 a log message, whose id is the server's name),
 * settles or informs the calls they belong to and hands log messages to `onLog({ server, level, data, text })`, all in the order they came.
 */
export function callQueue(onLog) {
  const pending = new Map() // id → Call
  return {
    wake(events) {
      for (let i = 0; i < events.length; i += 5) {
        if (events[i + 1] === 3) {
          onLog?.({ server: events[i], level: events[i + 2], data: events[i + 3], text: events[i + 4] })
          continue
        }
        const call = pending.get(events[i])
        if (call === undefined) continue
        if (events[i + 1] === 0 || events[i + 1] === 4) {
          pending.delete(events[i])
          call.done(events[i + 2], events[i + 3], events[i + 4], events[i + 1] === 4)
        } else if (events[i + 1] === 5) {
          pending.delete(events[i])
          call.failed(events[i + 2], events[i + 3])
        } else if (events[i + 1] === 2) {
          pending.delete(events[i])
          call.givenUp()
        } else {
          call.onProgress?.({ progress: events[i + 2], total: events[i + 3], message: events[i + 4] })
        }
      }
    },
    /** The outcome of `call`, a ToolResult. */
    expect(call) {
      pending.set(call.id, call)
      return new Promise((resolve) => (call.resolve = resolve))
    },
  }
}
