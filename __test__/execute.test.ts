// Contract § Executing a tool: result conversion, arguments, timeouts, aborts, dead servers.
import assert from "node:assert/strict"
import path from "node:path"
import { after, before, describe, test } from "node:test"
import { loadMcp, type McpSource, type ToolResult } from "toolnexus"
import {
  FAST,
  local,
  openSource,
  readRecord,
  SHORT_TIMEOUT,
  tempDir,
  timed,
  toolNamed,
  toolsFlag,
  waitForEvent,
} from "./helpers.js"

/** Asserts `res` is an error result whose output names `server`. */
function assertErrorNaming(res: ToolResult, server: string) {
  assert.equal(res.isError, true, `expected an error result, got: ${res.output}`)
  assert.equal(typeof res.output, "string")
  assert.ok(res.output.includes(server), `the output does not name server ${server}: ${res.output}`)
}

describe("output conversion", { timeout: 60_000 }, () => {
  let source: McpSource
  const call = (tool: string, args: Record<string, unknown> = {}) => toolNamed(source, `fx_${tool}`).execute(args)

  before(async () => {
    source = await loadMcp({ fx: local() })
    assert.equal(source.status.fx, "connected")
  })
  after(() => source.close())

  test("text parts are joined by a newline; metadata names the server", async () => {
    const res = await call("text")
    assert.equal(res.output, "alpha\nbeta\ngamma")
    assert.equal(res.isError, false)
    assert.equal(res.metadata?.server, "fx")
  })

  test("non-text parts are left out of the output", async () => {
    assert.equal((await call("mixed")).output, "before\nafter")
  })

  test("isError: text parts joined by a blank line", async () => {
    const res = await call("fail")
    assert.deepEqual([res.isError, res.output], [true, "first problem\n\nsecond problem"])
    assert.equal(res.metadata?.server, "fx")
  })

  test("isError without text: a fixed message", async () => {
    const res = await call("fail_silent")
    assert.deepEqual([res.isError, res.output], [true, "MCP tool returned an error"])
  })

  test("structuredContent: JSON.stringify of it, keys in the server's order", async () => {
    const res = await call("structured")
    assert.equal(res.isError, false)
    assert.equal(res.output, JSON.stringify({ zeta: 1, alpha: { y: 2, x: [1, "two", null] } }))
  })

  test("isError takes precedence over structuredContent", async () => {
    const res = await call("structured_fail")
    assert.deepEqual([res.isError, res.output], [true, "it broke"])
  })

  test("arguments reach the server as given", async () => {
    const args = { text: "hi", n: 2, nested: { list: [1, "x", null], flag: false } }
    const res = await call("echo", args)
    assert.equal(res.isError, false, res.output)
    assert.deepEqual(JSON.parse(res.output), args)
  })

  test("arguments far bigger than the pipe, several at once, arrive whole and in their own calls", async () => {
    // Each request overflows the pipe to the server, so the rest waits in the writer's backlog
    // while the JS thread goes on.
    const texts = ["a", "b", "c", "d"].map((c) => c.repeat(300_000) + 'é\n"')
    const results = await Promise.all(texts.map((text) => call("echo", { text })))
    assert.deepEqual(
      results.map((res) => JSON.parse(res.output).text),
      texts,
    )
  })

  test("undefined args are sent as {}", async () => {
    const res = await toolNamed(source, "fx_echo").execute(undefined as never)
    assert.equal(res.isError, false, res.output)
    assert.equal(res.output, "{}")
  })
})

describe("the call itself", { timeout: 60_000 }, () => {
  test("tools/call carries the original, unsanitized tool name", async (t) => {
    const record = path.join(tempDir(t), "calls.jsonl")
    const source = await openSource(t, { "my.srv": local(toolsFlag(["do it"]), `--record=${record}`) })
    const res = await toolNamed(source, "my_srv_do_it").execute({ a: 1 })
    assert.equal(res.isError, false, res.output)
    assert.deepEqual(
      readRecord(record).map((e) => e.tool),
      ["do it"],
    )
  })

  test("the server timeout bounds a call", async (t) => {
    const source = await openSource(t, { slowpoke: { ...local(), timeout: SHORT_TIMEOUT } })
    const { value: res, ms } = await timed(() => toolNamed(source, "slowpoke_hang").execute({}))
    assertErrorNaming(res, "slowpoke")
    assert.ok(ms < FAST, `took ${ms} ms with a ${SHORT_TIMEOUT} ms server timeout`)
  })

  test("ctx.timeout shortens the server timeout; the connection stays usable", async (t) => {
    const source = await openSource(t, { fx: local() })
    const { value: res, ms } = await timed(() => toolNamed(source, "fx_hang").execute({}, { timeout: 300 }))
    assertErrorNaming(res, "fx")
    assert.ok(ms < FAST, `took ${ms} ms with ctx.timeout 300 (server default 30 s)`)
    const after = await toolNamed(source, "fx_echo").execute({ still: "here" })
    assert.deepEqual([after.isError, after.output], [false, '{"still":"here"}'])
  })

  test("ctx.timeout lengthens the server timeout", async (t) => {
    const source = await openSource(t, { slowpoke: { ...local(), timeout: SHORT_TIMEOUT } })
    const res = await toolNamed(source, "slowpoke_sleep").execute({ ms: SHORT_TIMEOUT + 1_000 }, { timeout: 10_000 })
    assert.deepEqual([res.isError, res.output], [false, `slept ${SHORT_TIMEOUT + 1_000}`])
  })

  test("progress notifications restart the clock", async (t) => {
    const source = await openSource(t, { fx: local() })
    // 12 steps 150 ms apart: 1.8 s in all, never more than 150 ms without news.
    const res = await toolNamed(source, "fx_progress").execute({ steps: 12, interval: 150 }, { timeout: 1_000 })
    assert.deepEqual([res.isError, res.output], [false, "done after 12 steps"])
  })

  test("ctx.signal aborts the call and the server receives notifications/cancelled", async (t) => {
    const record = path.join(tempDir(t), "calls.jsonl")
    const source = await openSource(t, { fx: local(`--record=${record}`) })
    const controller = new AbortController()
    const pending = timed(() => toolNamed(source, "fx_hang").execute({}, { signal: controller.signal }))
    const started = await waitForEvent(record, (e) => e.event === "started" && e.tool === "hang")
    assert.ok(started, "the hang tool never started")
    controller.abort()
    const { value: res, ms } = await pending
    assertErrorNaming(res, "fx")
    assert.ok(ms < FAST, `the aborted call took ${ms} ms`)
    const cancelled = await waitForEvent(record, (e) => e.event === "cancelled")
    assert.ok(cancelled, `no notifications/cancelled reached the server; record: ${JSON.stringify(readRecord(record))}`)
    assert.equal(cancelled.requestId, started.requestId)
    const after = await toolNamed(source, "fx_echo").execute({ still: "here" })
    assert.deepEqual(
      [after.isError, after.output],
      [false, '{"still":"here"}'],
      "the connection should survive an aborted call",
    )
  })

  test("an already aborted ctx.signal gives an error result at once", async (t) => {
    const source = await openSource(t, { fx: local() })
    const { value: res, ms } = await timed(() =>
      toolNamed(source, "fx_hang").execute({}, { signal: AbortSignal.abort() }),
    )
    assert.equal(res.output, 'MCP server "fx": tools/call "hang" was aborted', "worded as a call aborted in flight")
    assert.equal(res.isError, true)
    assert.ok(ms < FAST, `took ${ms} ms`)
  })

  test("a ctx that cannot be used gives an error result saying why, never a throw", async (t) => {
    const source = await openSource(t, { fx: local() })
    const echo = toolNamed(source, "fx_echo")
    // Deliberately wrong types, as untyped JavaScript can pass them.
    const badSignal = await echo.execute({}, { signal: {} as AbortSignal })
    assertErrorNaming(badSignal, "fx")
    assert.match(badSignal.output, /ctx\.signal must be an AbortSignal/)
    const badTimeout = await echo.execute({}, { timeout: "abc" as unknown as number })
    assertErrorNaming(badTimeout, "fx")
    assert.match(badTimeout.output, /ctx\.timeout must be a number of milliseconds, got string/)
    assert.equal((await echo.execute({ text: "still fine" })).isError, false)
  })

  test("arguments that are not an object give an error result naming the server and the tool", async (t) => {
    const source = await openSource(t, { fx: local() })
    const res = await toolNamed(source, "fx_echo").execute([1, 2] as unknown as Record<string, unknown>)
    assert.equal(res.output, 'MCP server "fx": arguments for "echo" must be a JSON object')
    assert.equal(res.isError, true)
  })
})

describe("dead and closed servers", { timeout: 60_000 }, () => {
  test("a server that dies mid-call gives an error result naming it, and so does every later call", async (t) => {
    const source = await openSource(t, { crashy: local() })
    const first = await timed(() => toolNamed(source, "crashy_crash").execute({}))
    assertErrorNaming(first.value, "crashy")
    assert.ok(first.ms < FAST, `the crash took ${first.ms} ms to surface`)
    const later = await timed(() => toolNamed(source, "crashy_echo").execute({}))
    assertErrorNaming(later.value, "crashy")
    assert.ok(later.ms < FAST, `a call on the dead server took ${later.ms} ms`)
  })

  test("execute after close() gives an error result and does not hang", async () => {
    const source = await loadMcp({ fx: local() })
    const echo = toolNamed(source, "fx_echo")
    await source.close()
    const { value: res, ms } = await timed(() => echo.execute({ x: 1 }))
    assertErrorNaming(res, "fx")
    assert.ok(ms < FAST, `took ${ms} ms`)
  })
})
