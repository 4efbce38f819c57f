// What tracing costs a tool call (SEP-414 trace context, OpenTelemetry spans): sequential
// echo p50 and p99 through loadMcp on the reference server, each case in a fresh process
// pinned to one core when `taskset` is there:
//   absent   `@opentelemetry/api` not installed (its resolution made to fail)
//   idle     installed, no provider registered, no active span: the usual case
//   traced   a provider registered and a span active: a client span per call, its
//            context carried in `params._meta`
// node bench/trace.mjs [--calls 3000]
import { execFileSync, spawnSync } from "node:child_process"
import { parseArgs } from "node:util"
import { formatNumber } from "./lib/stats.mjs"

const { values } = parseArgs({ options: { calls: { type: "string", default: "3000" }, case: { type: "string" } } })
const calls = Number(values.calls)

if (values.case) {
  const { loadMcp } = await import("../index.js")
  const { refserverPath, serverCommand } = await import("./lib/refserver.mjs")
  const { median, quantile, sorted } = await import("./lib/stats.mjs")
  let run = (fn) => fn()
  if (values.case === "traced") {
    const { context, trace } = await import("@opentelemetry/api")
    const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks")
    const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } =
      await import("@opentelemetry/sdk-trace-base")
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    const exporter = new InMemorySpanExporter()
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
    const outer = trace.getTracer("bench").startSpan("agent")
    run = (fn) => context.with(trace.setSpan(context.active(), outer), () => fn().finally(() => exporter.reset()))
  }
  const source = await loadMcp({ one: { command: serverCommand(refserverPath(), {}) } })
  const echo = source.tools.find((t) => t.name === "one_echo")
  for (let i = 0; i < 300; i++) await run(() => echo.execute({ text: "warm" }))
  const times = []
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint()
    await run(() => echo.execute({ text: "x" }))
    times.push(Number(process.hrtime.bigint() - start))
  }
  await source.close()
  const s = sorted(times)
  process.stdout.write(JSON.stringify({ p50: median(s), p99: quantile(s, 0.99) }))
} else {
  const pinned = spawnSync("taskset", ["-c", "0", "true"]).status === 0
  const measure = (name) => {
    const preload = name === "absent" ? ["-r", new URL("./lib/no-otel.cjs", import.meta.url).pathname] : []
    const args = [...preload, new URL(import.meta.url).pathname, "--case", name, "--calls", String(calls)]
    const out = pinned
      ? execFileSync("taskset", ["-c", "0", process.execPath, ...args])
      : execFileSync(process.execPath, args)
    return JSON.parse(out.toString())
  }
  const results = {}
  for (const name of ["absent", "idle", "traced"]) results[name] = measure(name)
  const us = (ns) => formatNumber(ns / 1e3)
  const line = Object.entries(results).map(([name, r]) => `${name} p50 ${us(r.p50)} µs, p99 ${us(r.p99)} µs`)
  process.stdout.write(
    `sequential echo through loadMcp${pinned ? ", pinned to one core" : ""}: ${line.join("; ")}; idle/absent ${(results.idle.p50 / results.absent.p50).toFixed(2)}x, traced/absent ${(results.traced.p50 / results.absent.p50).toFixed(2)}x\n`,
  )
}
