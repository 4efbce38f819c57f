// Trace context and spans (SEP-414): with the OpenTelemetry SDK registered (its in-memory
// exporter), a tool call runs in a client span under the caller's, and the server, written
// with the official SDK of each era, receives that span's context in `params._meta`; each
// operation's duration is recorded in the `mcp.client.operation.duration` histogram.
import assert from "node:assert/strict"
import { after, before, test } from "node:test"
import { context, metrics, propagation, trace, SpanKind } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { createMcpStore, loadMcp, type StoreTool, type Tool } from "toolnexus"
import { startModernHttp } from "./fixtures/modern-http.mjs"
import { fixture, NODE } from "./helpers.js"

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
/** A reader the test collects from when it wants: the SDK's own aggregation, no timer. */
class Collected extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }
  protected async onForceFlush() {}
  protected async onShutdown() {}
}
const reader = new Collected()
before(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(provider)
  // Before the first traced call: toolnexus makes its histogram once.
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
})
after(() => {
  trace.disable()
  metrics.disable()
  context.disable()
})

const VERSIONS = { v1: "2025-11-25", v2: "2026-07-28" }
const config = {
  v1: { command: [NODE, fixture("trace-server.mjs"), "v1"], protocol: "2025-11-25" as const },
  v2: { command: [NODE, fixture("trace-server.mjs"), "v2"], protocol: "2026-07-28" as const },
}

/** Calls `tool` inside an active span of the caller's, with baggage; what the server got, and the spans. */
async function callInSpan(tool: Tool | StoreTool) {
  exporter.reset()
  const baggage = propagation.createBaggage({ "user id": { value: "a b" } })
  const outer = trace.getTracer("agent").startSpan("agent step")
  const parent = propagation.setBaggage(trace.setSpan(context.active(), outer), baggage)
  const result = await context.with(parent, () => tool.execute({}))
  outer.end()
  const carried = JSON.parse(result.output) as { traceparent?: string; tracestate?: string; baggage?: string }
  const spans = exporter.getFinishedSpans()
  const call = spans.find((span) => span.name === `tools/call meta`)!
  return { carried, call, outer, spans }
}

for (const era of ["v1", "v2"] as const) {
  test(`a call's client span is the caller's child, and the server (SDK ${era}) gets its context in _meta`, async (t) => {
    const source = await loadMcp({ [era]: config[era] })
    t.after(() => source.close())
    const { carried, call, outer } = await callInSpan(source.tools[0]!)
    assert.ok(call, "a span for the call")
    assert.equal(call.kind, SpanKind.CLIENT)
    assert.equal(call.parentSpanContext?.spanId, outer.spanContext().spanId)
    assert.equal(call.spanContext().traceId, outer.spanContext().traceId)
    assert.deepEqual(call.attributes, {
      "mcp.method.name": "tools/call",
      "mcp.protocol.version": VERSIONS[era],
      "network.transport": "pipe",
      "gen_ai.tool.name": "meta",
      "gen_ai.operation.name": "execute_tool",
    })
    const { traceId, spanId } = call.spanContext()
    assert.equal(carried.traceparent, `00-${traceId}-${spanId}-01`)
    assert.equal(carried.baggage, "user%20id=a%20b")
  })
}

test("a store's calls are traced the same; without an active span or provider a call carries nothing", async (t) => {
  const store = createMcpStore({ v2: config.v2 }, { catalog: false })
  t.after(() => store.close())
  await store.listToolsAsync()
  const [tool] = store.tools()
  const { carried, call } = await callInSpan(tool!)
  assert.equal(carried.traceparent, `00-${call.spanContext().traceId}-${call.spanContext().spanId}-01`)
  trace.disable()
  const bare = JSON.parse((await tool!.execute({})).output)
  assert.deepEqual(bare, {}, "no provider, no active span: no trace context")
  trace.setGlobalTracerProvider(provider)
})

test("a host's request (a read) is traced and carries the context too; a failed call's span says its error", async (t) => {
  const source = await loadMcp({ v2: config.v2 })
  t.after(() => source.close())
  exporter.reset()
  const outer = trace.getTracer("agent").startSpan("agent step")
  const parent = trace.setSpan(context.active(), outer)
  const read = await context.with(parent, () => source.readResource("v2", "trace://meta"))
  const failed = await context.with(parent, () => source.tools.find((tool) => tool.name === "v2_fail")!.execute({}))
  outer.end()
  const spans = exporter.getFinishedSpans()
  const readSpan = spans.find((span) => span.name === "resources/read")!
  assert.ok(readSpan, spans.map((span) => span.name).join(", "))
  assert.equal(readSpan.parentSpanContext?.spanId, outer.spanContext().spanId)
  const { traceId, spanId } = readSpan.spanContext()
  const carried = JSON.parse(read.contents[0]!.text as string)
  assert.equal(carried.traceparent, `00-${traceId}-${spanId}-01`)
  assert.equal(failed.isError, true)
  const failSpan = spans.find((span) => span.name === "tools/call fail")!
  assert.equal(failSpan.attributes["error.type"], "tool_error")
})

test("a remote server's spans name its address and port", async (t) => {
  const server = await startModernHttp(({ method }, _res, answer) => {
    if (method === "tools/list") return answer({ tools: [{ name: "ping", inputSchema: { type: "object" } }] })
    if (method === "tools/call") return answer({ content: [{ type: "text", text: "pong" }] })
    return false
  })
  t.after(() => server.close())
  const source = await loadMcp({ h: { url: server.url } })
  t.after(() => source.close())
  exporter.reset()
  const outer = trace.getTracer("agent").startSpan("agent step")
  await context.with(trace.setSpan(context.active(), outer), () => source.tools[0]!.execute({}))
  outer.end()
  const call = exporter.getFinishedSpans().find((span) => span.name === "tools/call ping")!
  const { hostname, port } = new URL(server.url)
  assert.equal(call.attributes["server.address"], hostname)
  assert.equal(call.attributes["server.port"], Number(port))
  assert.equal(call.attributes["network.transport"], "tcp")
  assert.equal(call.attributes["mcp.protocol.version"], "2026-07-28")
})

test("each traced operation is recorded in mcp.client.operation.duration, in seconds, with its attributes", async (t) => {
  const source = await loadMcp({ v2: config.v2 })
  t.after(() => source.close())
  await callInSpan(source.tools[0]!)
  const { resourceMetrics } = await reader.collect()
  const histogram = resourceMetrics.scopeMetrics
    .filter((scope) => scope.scope.name === "toolnexus")
    .flatMap((scope) => scope.metrics)
    .find((metric) => metric.descriptor.name === "mcp.client.operation.duration")
  assert.ok(histogram, "the histogram is recorded")
  assert.equal(histogram.descriptor.unit, "s")
  const point = histogram.dataPoints.find(
    (p) => p.attributes["gen_ai.tool.name"] === "meta" && p.attributes["mcp.protocol.version"] === "2026-07-28",
  )
  assert.ok(point, JSON.stringify(histogram.dataPoints.map((p) => p.attributes)))
  const value = point.value as { count: number; sum: number }
  assert.ok(value.count >= 1 && value.sum > 0 && value.sum < 30, JSON.stringify(value))
})
