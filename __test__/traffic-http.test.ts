// Server-to-client traffic during a tools/call over streamable HTTP (stateful sessions,
// SSE answers): form elicitation through `waitFor` with schema defaults filled in,
// progress to `onProgress`, `notifications/message` to `onLog`, and cancellation through
// `ctx.signal`. The stdio counterparts live in traffic.test.ts.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { loadMcp, type Answer, type McpSource, type Request } from "toolnexus"
import { startTrafficHttp } from "./fixtures/traffic-http.mjs"
import { DEFAULTS_SCHEMA, ELICIT_MESSAGE } from "./fixtures/traffic-tools.mjs"
import { poll, sleep, toolNamed } from "./helpers.js"
import {
  assertOk,
  assertProgressSteps,
  cancelBesideNeighbour,
  elicited,
  LOG_ENTRIES,
  progressRecorder,
} from "./traffic-shared.js"

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

// ---------------------------------------------------------------- elicitation

describe("elicitation over streamable HTTP", { timeout: 30_000 }, () => {
  test("a form elicitation reaches waitFor as kind input; the accepted answer, defaults filled in, reaches the server", async () => {
    const requests: Request[] = []
    const waitFor = async (request: Request): Promise<Answer> => {
      requests.push(request)
      return { id: request.id, ok: true, data: { name: "Ada", color: "red" } }
    }
    await withHttp({ waitFor }, async (source) => {
      const result = elicited(await toolNamed(source, `${SERVER}_elicit-with-defaults`).execute({}))
      assert.equal(requests.length, 1, "waitFor should be asked exactly once")
      const [request] = requests
      assert.equal(request.kind, "input")
      assert.equal(request.prompt, ELICIT_MESSAGE)
      assert.equal(typeof request.id, "string")
      assert.ok(request.id.length > 0, "the request id is empty")
      assert.deepEqual(request.data, { schema: DEFAULTS_SCHEMA })
      // `count` and `subscribe` were left out and have defaults; `note` has none and stays absent.
      assert.deepEqual(result, {
        action: "accept",
        content: { name: "Ada", color: "red", count: 3, subscribe: true },
      })
    })
  })
})

// ---------------------------------------------------------------- progress

describe("progress over streamable HTTP", { timeout: 30_000 }, () => {
  test("onProgress sees every notification, in order, before the call settles", async () => {
    const rec = progressRecorder()
    await withHttp({}, async (source, fixture) => {
      const res = await toolNamed(source, `${SERVER}_progress`).execute(
        { steps: 6, interval: 30 },
        { onProgress: rec.onProgress },
      )
      rec.settle()
      assertOk(res, "progress done: 6")
      assertProgressSteps(fixture.events, rec.seen, 6)
      await sleep(200) // an absence cannot be awaited: a late progress would have come by now
      assert.deepEqual(rec.afterSettle, [], "onProgress was called after the call settled")
    })
  })
})

// ---------------------------------------------------------------- logging

describe("logging over streamable HTTP", { timeout: 30_000 }, () => {
  test("notifications/message reaches onLog with the server name, level and data, in order", async () => {
    const logs: Array<{ server: string; level: string; data: unknown }> = []
    const onLog = (server: string, level: string, data: unknown) => logs.push({ server, level, data })
    // No debug: a client may raise the server's minimum level with logging/setLevel.
    const entries = LOG_ENTRIES
    await withHttp({ onLog }, async (source) => {
      assertOk(await toolNamed(source, `${SERVER}_log`).execute({ entries }), `logged ${entries.length}`)
      await poll(() => logs.length >= entries.length, 5_000)
      await sleep(100) // an absence cannot be awaited: an entry too many would have come by now
      assert.deepEqual(
        logs,
        entries.map((e) => ({ server: SERVER, ...e })),
      )
    })
  })
})

// ---------------------------------------------------------------- cancellation

describe("cancellation over streamable HTTP", { timeout: 30_000 }, () => {
  test("ctx.signal settles the call at once as an error and the server gets notifications/cancelled for its id", async () => {
    await withHttp({}, async (source, fixture) => {
      const { res, neighbour, neighbourStarted } = await cancelBesideNeighbour({
        slow: toolNamed(source, `${SERVER}_slow`),
        events: () => fixture.events,
        what: "events",
        neighbourArgs: { ms: 1_500 },
        targetArgs: { ms: 60_000, mark: "target" },
        cancelMs: 5_000,
      })
      assert.ok(!res.output.includes("late:"), `the server's answer after the cancel leaked in: ${res.output}`)
      await sleep(100) // an absence cannot be awaited: a second cancel would have come by now
      assert.equal(fixture.events.filter((e) => e.event === "cancelled").length, 1, "exactly one request was cancelled")

      // The neighbour is untouched and the session keeps working.
      assertOk(await neighbour, `done:${neighbourStarted.requestId}`, "the call running beside the cancelled one")
      assertOk(await toolNamed(source, `${SERVER}_plain`).execute({}), "one\ntwo", "a call after the cancel")
    })
  })
})
