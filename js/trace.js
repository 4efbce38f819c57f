// Trace context and spans (SEP-414; OpenTelemetry's MCP conventions). With
// `@opentelemetry/api` installed (an optional peer dependency), each tool call and each
// request a host makes (listings, reads, prompts, completions) runs in a client span under
// the caller's active one and carries that span's context in
// `params._meta` (`traceparent`, `tracestate`, `baggage`), so the server's spans join the
// caller's trace; `mcp.client.operation.duration` records how long it took. The API is
// looked for at the first call; without it nothing is loaded, and with neither a
// registered provider nor an active span nothing is traced.
import { createRequire } from "node:module"

let otel // undefined: not looked for yet; null: not installed
let noop // the API's no-op tracer provider, what its proxy holds until one is registered
let duration // the histogram, made once

/**
 * The OpenTelemetry API when a call is to be traced: it is installed, and a provider is
 * registered or a span is active. Null otherwise, at the cost of two lookups.
 */
export function tracing() {
  if (otel === undefined) {
    try {
      otel = createRequire(import.meta.url)("@opentelemetry/api")
      noop = new otel.ProxyTracerProvider().getDelegate()
    } catch {
      otel = null
    }
  }
  if (!otel) return null
  const idle = otel.trace.getTracerProvider().getDelegate?.() === noop
  return idle && !otel.trace.getSpan(otel.context.active()) ? null : otel
}

/**
 * Runs `start(trace)`, a request of `method` (for `tools/call`, of `tool` as its server
 * names it), in a span of `otel` (see `tracing`), `trace` being the JSON of the trace
 * context to carry, if there is one. `server()` gives the server's own attributes as JSON
 * (protocol version, transport, address), or null. The promise it returns settles the
 * span: an `isError` result or a rejection gives it its `error.type`.
 */
export function traced(otel, method, tool, start, server) {
  const parent = otel.context.active()
  const attributes = { "mcp.method.name": method, ...JSON.parse(server?.() ?? "{}") }
  if (tool !== undefined)
    Object.assign(attributes, { "gen_ai.tool.name": tool, "gen_ai.operation.name": "execute_tool" })
  const name = tool === undefined ? method : `${method} ${tool}`
  const span = otel.trace.getTracer("toolnexus").startSpan(name, { kind: otel.SpanKind.CLIENT, attributes }, parent)
  const context = span.spanContext()
  if (!span.isRecording() && !otel.isSpanContextValid(context)) return start(undefined)
  const began = performance.now()
  const end = (error) => {
    if (error) {
      span.setAttribute("error.type", error)
      span.setStatus({ code: otel.SpanStatusCode.ERROR })
    }
    span.end()
    duration ??= otel.metrics.getMeter("toolnexus").createHistogram("mcp.client.operation.duration", { unit: "s" })
    duration.record((performance.now() - began) / 1000, error ? { ...attributes, "error.type": error } : attributes)
  }
  return start(carrier(otel, otel.trace.setSpan(parent, span), context)).then(
    (result) => {
      end(result?.isError ? (result.metadata?.code ?? "tool_error") : undefined)
      return result
    },
    (error) => {
      end(error?.code ?? error?.name ?? "Error")
      throw error
    },
  )
}

/** The W3C trace context of `span` in `context`, as JSON: what `params._meta` carries. */
function carrier(otel, context, { traceId, spanId, traceFlags, traceState }) {
  const flags = (traceFlags & 0xff).toString(16).padStart(2, "0")
  const out = { traceparent: `00-${traceId}-${spanId}-${flags}` }
  const state = traceState?.serialize()
  if (state) out.tracestate = state
  const entries = otel.propagation.getBaggage(context)?.getAllEntries() ?? []
  if (entries.length > 0) {
    out.baggage = entries.map(([key, { value }]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join(",")
  }
  return JSON.stringify(out)
}
