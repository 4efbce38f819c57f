// Trace context and spans for tool calls (SEP-414; OpenTelemetry's MCP conventions).
// With `@opentelemetry/api` installed (an optional peer dependency), each call runs in a
// client span under the caller's active one and carries that span's context in
// `params._meta` (`traceparent`, `tracestate`, `baggage`), so the server's spans join the
// caller's trace; `mcp.client.operation.duration` records how long it took. The API is
// looked for at the first call; without it nothing is loaded, and without a registered
// provider its spans are the API's no-op ones.
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
 * Runs `start(trace)` for a `tools/call` of `tool` (as its server names it) in a span of
 * `otel` (see `tracing`), `trace` being the JSON of the trace context to carry, if there is
 * one; the promise it returns settles the span.
 */
export function traced(otel, tool, start) {
  const parent = otel.context.active()
  const attributes = {
    "mcp.method.name": "tools/call",
    "gen_ai.tool.name": tool,
    "gen_ai.operation.name": "execute_tool",
  }
  const span = otel.trace
    .getTracer("toolnexus")
    .startSpan(`tools/call ${tool}`, { kind: otel.SpanKind.CLIENT, attributes }, parent)
  const context = span.spanContext()
  if (!span.isRecording() && !otel.isSpanContextValid(context)) return start(undefined)
  const began = performance.now()
  return start(carrier(otel, otel.trace.setSpan(parent, span), context)).then((result) => {
    const error = result?.isError ? (result.metadata?.code ?? "tool_error") : undefined
    if (error) {
      span.setAttribute("error.type", error)
      span.setStatus({ code: otel.SpanStatusCode.ERROR })
    }
    span.end()
    duration ??= otel.metrics.getMeter("toolnexus").createHistogram("mcp.client.operation.duration", { unit: "s" })
    duration.record((performance.now() - began) / 1000, error ? { ...attributes, "error.type": error } : attributes)
    return result
  })
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
