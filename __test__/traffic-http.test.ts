// Server-to-client traffic during a tools/call over streamable HTTP (stateful sessions,
// SSE answers): form elicitation through `waitFor` with schema defaults filled in,
// progress to `onProgress`, `notifications/message` to `onLog`, and cancellation through
// `ctx.signal`. The stdio counterparts live in traffic.test.ts.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { loadMcp, type Answer, type McpSource, type Request, type ToolResult } from "toolnexus"
import { DEFAULTS_SCHEMA, ELICIT_MESSAGE, startTrafficHttp } from "./fixtures/traffic-http.mjs"
import { poll, sleep, toolNamed } from "./helpers.js"

const SERVER = "srv"

type Fixture = Awaited<ReturnType<typeof startTrafficHttp>>

/** Starts the HTTP fixture, loads it as `srv` with `opts`, runs `fn`; closes source and server always. */
async function withHttp<T>(
  opts: Parameters<typeof loadMcp>[1],
  fn: (source: McpSource, fixture: Fixture) => Promise<T>,
): Promise<T> {
  const fixture = await startTrafficHttp()
  let source: McpSource | undefined
  try {
    source = await loadMcp({ [SERVER]: { url: fixture.url } }, opts)
    assert.deepEqual(source.status, { [SERVER]: "connected" })
    const value = await fn(source, fixture)
    // Stateful: one session was issued and the calls rode SSE streams, not JSON bodies.
    assert.equal(fixture.sessions(), 1, "expected exactly one MCP session")
    const calls = fixture.log.filter((e) => e.rpc.includes("tools/call"))
    assert.ok(calls.length > 0, "no tools/call reached the server over HTTP")
    for (const call of calls) {
      assert.ok(call.sessionId, `a tools/call without Mcp-Session-Id: ${JSON.stringify(call)}`)
      if (call.status === 200) assert.match(String(call.contentType), /text\/event-stream/, JSON.stringify(call))
    }
    return value
  } finally {
    await source?.close()
    await fixture.close()
  }
}

function assertOk(res: ToolResult, output: string, what = "the call") {
  assert.deepEqual([res.isError, res.output], [false, output], `${what}: ${JSON.stringify(res)}`)
}

// ---------------------------------------------------------------- elicitation

describe("elicitation over streamable HTTP", { timeout: 30_000 }, () => {
  test("a form elicitation reaches waitFor as kind input; the accepted answer, defaults filled in, reaches the server", async () => {
    const requests: Request[] = []
    const waitFor = async (request: Request): Promise<Answer> => {
      requests.push(request)
      return { id: request.id, ok: true, data: { name: "Ada", color: "red" } }
    }
    await withHttp({ waitFor }, async (source) => {
      const res = await toolNamed(source, `${SERVER}_elicit-with-defaults`).execute({})
      assert.equal(res.isError, false, `the eliciting call failed: ${res.output}`)
      assert.equal(requests.length, 1, "waitFor should be asked exactly once")
      const [request] = requests
      assert.equal(request.kind, "input")
      assert.equal(request.prompt, ELICIT_MESSAGE)
      assert.equal(typeof request.id, "string")
      assert.ok(request.id.length > 0, "the request id is empty")
      assert.deepEqual(request.data, { schema: DEFAULTS_SCHEMA })
      // `count` and `subscribe` were left out and have defaults; `note` has none and stays absent.
      assert.deepEqual(JSON.parse(res.output), {
        action: "accept",
        content: { name: "Ada", color: "red", count: 3, subscribe: true },
      })
    })
  })
})

// ---------------------------------------------------------------- progress

type Progress = { progress: number; total?: number; message?: string }

describe("progress over streamable HTTP", { timeout: 30_000 }, () => {
  test("onProgress sees every notification, in order, before the call settles", async () => {
    const seen: Progress[] = []
    const afterSettle: Progress[] = []
    let settled = false
    const onProgress = (p: Progress) => {
      const picked: Progress = { progress: p.progress }
      if (p.total !== undefined) picked.total = p.total
      if (p.message !== undefined) picked.message = p.message
      seen.push(picked)
      if (settled) afterSettle.push(picked)
    }
    await withHttp({}, async (source, fixture) => {
      const res = await toolNamed(source, `${SERVER}_progress`).execute({ steps: 6, interval: 30 }, { onProgress })
      settled = true
      assertOk(res, "progress done: 6")
      const started = fixture.events.find((e) => e.event === "started" && e.tool === "progress")
      assert.ok(started, "the progress tool never started")
      assert.ok(
        typeof started.progressToken === "string" || typeof started.progressToken === "number",
        `progressToken on the call: ${JSON.stringify(started.progressToken)}`,
      )
      assert.deepEqual(seen, [
        { progress: 0 },
        ...Array.from({ length: 6 }, (_, i) => ({ progress: i + 1, total: 6, message: `step ${i + 1} of 6` })),
      ])
      await sleep(200)
      assert.deepEqual(afterSettle, [], "onProgress was called after the call settled")
    })
  })
})

// ---------------------------------------------------------------- logging

describe("logging over streamable HTTP", { timeout: 30_000 }, () => {
  test("notifications/message reaches onLog with the server name, level and data, in order", async () => {
    const logs: Array<{ server: string; level: string; data: unknown }> = []
    const onLog = (server: string, level: string, data: unknown) => logs.push({ server, level, data })
    // No debug: a client may raise the server's minimum level with logging/setLevel.
    const entries = [
      { level: "info", data: "alpha starting" },
      { level: "notice", data: { phase: "index", files: 12, nested: { ok: true, list: [1, "two", null] } } },
      { level: "warning", data: "disk almost full" },
      { level: "error", data: ["a", 2] },
      { level: "critical", data: 42 },
      { level: "alert", data: { page: "oncall" } },
      { level: "emergency", data: "everything is on fire" },
    ]
    await withHttp({ onLog }, async (source) => {
      assertOk(await toolNamed(source, `${SERVER}_log`).execute({ entries }), `logged ${entries.length}`)
      await poll(() => logs.length >= entries.length, 5_000)
      await sleep(100)
      assert.deepEqual(logs, entries.map((e) => ({ server: SERVER, ...e })))
    })
  })
})

// ---------------------------------------------------------------- cancellation

describe("cancellation over streamable HTTP", { timeout: 30_000 }, () => {
  test("ctx.signal settles the call at once as an error and the server gets notifications/cancelled for its id", async () => {
    await withHttp({}, async (source, fixture) => {
      const slow = toolNamed(source, `${SERVER}_slow`)
      // A neighbour in flight, so the cancelled request is not simply the only one.
      const neighbour = slow.execute({ ms: 1_500 })
      const controller = new AbortController()
      const pending = slow.execute({ ms: 60_000, mark: "target" }, { signal: controller.signal })
      const started = await poll(() => {
        const all = fixture.events.filter((e) => e.event === "started" && e.tool === "slow")
        return all.length === 2 ? all : undefined
      }, 10_000)
      assert.ok(started, `both slow calls should start; events: ${JSON.stringify(fixture.events)}`)
      const target = started.find((e) => e.args?.mark === "target")
      const neighbourStarted = started.find((e) => e.args?.ms === 1_500)
      assert.ok(target && neighbourStarted, `events: ${JSON.stringify(started)}`)

      const abortedAt = Date.now()
      controller.abort(new Error("the user pressed stop"))
      const res = await pending
      const settleMs = Date.now() - abortedAt
      assert.equal(res.isError, true, `an aborted call must be an error result: ${JSON.stringify(res)}`)
      assert.ok(settleMs < 1_000, `the aborted call settled ${settleMs} ms after the abort`)
      assert.ok(!res.output.includes("late:"), `the server's answer after the cancel leaked in: ${res.output}`)

      const cancelled = await poll(() => fixture.events.find((e) => e.event === "cancelled"), 5_000)
      assert.ok(cancelled, `no notifications/cancelled reached the server; events: ${JSON.stringify(fixture.events)}`)
      assert.deepEqual(cancelled.requestId, target.requestId, "notifications/cancelled names another request")
      await sleep(100)
      assert.equal(fixture.events.filter((e) => e.event === "cancelled").length, 1, "exactly one request was cancelled")

      // The neighbour is untouched and the session keeps working.
      assertOk(await neighbour, `done:${neighbourStarted.requestId}`, "the call running beside the cancelled one")
      assertOk(await toolNamed(source, `${SERVER}_plain`).execute({}), "one\ntwo", "a call after the cancel")
    })
  })
})
