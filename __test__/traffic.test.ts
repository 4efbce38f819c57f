// Server-to-client traffic during a tools/call: elicitation defaults (SEP-1034) and the
// call clock standing still while a person answers, progress notifications (`onProgress`,
// in order, restarting the timeout, late ones dropped), cancellation through `ctx.signal`
// (late response dropped, source still usable), `notifications/message` logging (`onLog`
// or stderr for warning and above) and non-text results kept in `metadata.content`.
// Accepted/declined/cancelled/thrown elicitation is covered by elicitation.test.ts.
import assert from "node:assert/strict"
import path from "node:path"
import { describe, test } from "node:test"
import { loadMcp, type Answer, type McpSource, type Request } from "toolnexus"
import { ALL_DEFAULTS, DEFAULTS_SCHEMA, RICH_CONTENT, type TrafficEvent } from "./fixtures/traffic-tools.mjs"
import {
  assertCleanExit,
  fixture,
  linesWith,
  NODE,
  poll,
  readRecord,
  runNode,
  sleep,
  tempDir,
  timed,
  toolNamed,
} from "./helpers.js"
import {
  assertOk,
  assertProgressSteps,
  cancelBesideNeighbour,
  elicited,
  LOG_ENTRIES,
  progressRecorder,
} from "./traffic-shared.js"

const SERVER = "trf"
const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const
const LOUD = new Set(["warning", "error", "critical", "alert", "emergency"])

/** A local entry running the traffic fixture, recording its events to `record` when given. */
const traffic = (record?: string, extra: Record<string, unknown> = {}) => ({
  command: [NODE, fixture("traffic-server.mjs"), ...(record ? [record] : [])],
  timeout: 10_000,
  ...extra,
})

const events = (file: string) => readRecord<TrafficEvent>(file)

const waitForTraffic = (file: string, match: (e: TrafficEvent) => boolean, ms = 10_000) =>
  poll(() => events(file).find(match), ms)

/** Loads `config` with `opts`, checks every server connected, runs `fn`, always closes the source. */
async function withSource<T>(
  config: Record<string, object>,
  opts: Parameters<typeof loadMcp>[1],
  fn: (source: McpSource) => Promise<T>,
): Promise<T> {
  const source = await loadMcp(config, opts)
  try {
    const expected = Object.fromEntries(Object.keys(config).map((name) => [name, "connected"]))
    assert.deepEqual(source.status, expected)
    return await fn(source)
  } finally {
    await source.close()
  }
}

// ---------------------------------------------------------------- elicitation

describe("elicitation defaults (SEP-1034)", { timeout: 30_000 }, () => {
  const config = { [SERVER]: traffic() }
  const answering = (data?: Record<string, unknown>) => {
    const requests: Request[] = []
    const waitFor = async (request: Request): Promise<Answer> => {
      requests.push(request)
      return { id: request.id, ok: true, ...(data ? { data } : {}) }
    }
    return { requests, waitFor }
  }

  test("an accept that leaves out defaulted fields gets their defaults; given fields are kept", async () => {
    const { requests, waitFor } = answering({ name: "Ada", color: "red" })
    await withSource(config, { waitFor }, async (source) => {
      const result = elicited(await toolNamed(source, `${SERVER}_elicit-with-defaults`).execute({}))
      assert.equal(requests.length, 1)
      // The person sees the schema as the server sent it, defaults included.
      assert.deepEqual(requests[0].data, { schema: DEFAULTS_SCHEMA })
      // `note` has no default, so it stays absent.
      assert.deepEqual(result, { action: "accept", content: { name: "Ada", color: "red", count: 3, subscribe: true } })
    })
  })

  test("an accept without data gets every default; a decline gets none", async () => {
    const answers: Array<(request: Request) => Answer> = [
      (request) => ({ id: request.id, ok: true }),
      (request) => ({ id: request.id, ok: false, reason: "declined" }),
    ]
    const waitFor = async (request: Request): Promise<Answer> => answers.shift()!(request)
    await withSource(config, { waitFor }, async (source) => {
      const tool = toolNamed(source, `${SERVER}_elicit-with-defaults`)
      assert.deepEqual(elicited(await tool.execute({})), { action: "accept", content: ALL_DEFAULTS })
      assert.deepEqual(elicited(await tool.execute({})), { action: "decline" })
      assert.equal(answers.length, 0)
    })
  })

  test("falsy answers (false, 0, empty string) are kept, not replaced by defaults", async () => {
    const { waitFor } = answering({ name: "", count: 0, subscribe: false, note: "n" })
    await withSource(config, { waitFor }, async (source) => {
      const result = elicited(await toolNamed(source, `${SERVER}_elicit-with-defaults`).execute({}))
      assert.deepEqual(result, {
        action: "accept",
        content: { name: "", count: 0, subscribe: false, note: "n", color: "blue" },
      })
    })
  })
})

describe("time waiting for a person is not a timeout", { timeout: 30_000 }, () => {
  const slowAnswer = (ms: number) => {
    let calls = 0
    const waitFor = async (request: Request): Promise<Answer> => {
      calls++
      await sleep(ms) // a person who takes this long: the duration is the point
      return { id: request.id, ok: true, data: { answer: "after a while" } }
    }
    return { waitFor, calls: () => calls }
  }

  test("a 1500 ms answer on a call with ctx.timeout 500 completes; the clock runs again after it", async () => {
    const human = slowAnswer(1_500)
    await withSource({ [SERVER]: traffic() }, { waitFor: human.waitFor }, async (source) => {
      const tool = toolNamed(source, `${SERVER}_slow-elicit`)
      const { value: res, ms } = await timed(() => tool.execute({}, { timeout: 500 }))
      assert.equal(human.calls(), 1)
      assert.deepEqual(elicited(res), { action: "accept", content: { answer: "after a while" } })
      assert.ok(ms >= 1_400, `the call settled after ${ms} ms, before the answer came`)
      // Paused, not switched off: answered, then the server itself dawdles 3 s.
      const { value: late, ms: lateMs } = await timed(() => tool.execute({ after: 3_000 }, { timeout: 500 }))
      assert.equal(human.calls(), 2)
      assert.equal(late.isError, true, `expected a timeout once the answer was in, got ${JSON.stringify(late)}`)
      assert.ok(lateMs < 1_500 + 2_000, `the timeout after the answer took ${lateMs} ms`)
    })
  })

  test("an answer slower than the server timeout completes", async () => {
    // 3 s is enough for the fixture to start and list; the person takes 4.5 s.
    const human = slowAnswer(4_500)
    await withSource(
      { [SERVER]: traffic(undefined, { timeout: 3_000 }) },
      { waitFor: human.waitFor },
      async (source) => {
        const res = await toolNamed(source, `${SERVER}_slow-elicit`).execute({})
        assert.deepEqual(elicited(res), { action: "accept", content: { answer: "after a while" } })
      },
    )
  })
})

// ---------------------------------------------------------------- progress

describe("progress", { timeout: 30_000 }, () => {
  test("the server gets a progressToken and onProgress sees every notification, in order, before the call settles", async (t) => {
    const record = path.join(tempDir(t), "events.jsonl")
    const rec = progressRecorder()
    await withSource({ [SERVER]: traffic(record) }, {}, async (source) => {
      const res = await toolNamed(source, `${SERVER}_progress`).execute(
        { steps: 6, interval: 30 },
        { onProgress: rec.onProgress },
      )
      rec.settle()
      assertOk(res, "progress done: 6")
      assertProgressSteps(events(record), rec.seen, 6)
      await sleep(300) // an absence cannot be awaited: a late progress would have come by now
      assert.deepEqual(rec.afterSettle, [], "onProgress was called after the call settled")
    })
  })

  test("concurrent calls each get only their own progress", async () => {
    const a = progressRecorder()
    const b = progressRecorder()
    await withSource({ [SERVER]: traffic() }, {}, async (source) => {
      const tool = toolNamed(source, `${SERVER}_progress`)
      const [ra, rb] = await Promise.all([
        tool.execute({ steps: 3, interval: 40 }, { onProgress: a.onProgress }),
        tool.execute({ steps: 5, interval: 25 }, { onProgress: b.onProgress }),
      ])
      assertOk(ra, "progress done: 3")
      assertOk(rb, "progress done: 5")
      assert.deepEqual(
        a.seen.map((p) => [p.progress, p.total]),
        [
          [0, undefined],
          [1, 3],
          [2, 3],
          [3, 3],
        ],
      )
      assert.deepEqual(
        b.seen.map((p) => [p.progress, p.total]),
        [
          [0, undefined],
          [1, 5],
          [2, 5],
          [3, 5],
          [4, 5],
          [5, 5],
        ],
      )
    })
  })

  test("progress every 200 ms for 1.6 s keeps a call with ctx.timeout 400 alive", async () => {
    const rec = progressRecorder()
    await withSource({ [SERVER]: traffic() }, {}, async (source) => {
      const { value: res, ms } = await timed(() =>
        toolNamed(source, `${SERVER}_progress`).execute(
          { steps: 8, interval: 200 },
          { timeout: 400, onProgress: rec.onProgress },
        ),
      )
      assertOk(res, "progress done: 8", `after ${ms} ms`)
      assert.ok(ms >= 1_500, `settled after ${ms} ms`)
      assert.equal(rec.seen.length, 9)
    })
  })

  test("progress sent after the answer is dropped, and the source keeps working", async (t) => {
    const record = path.join(tempDir(t), "events.jsonl")
    const rec = progressRecorder()
    await withSource({ [SERVER]: traffic(record) }, {}, async (source) => {
      const res = await toolNamed(source, `${SERVER}_late-progress`).execute(
        { count: 5, interval: 50 },
        { onProgress: rec.onProgress },
      )
      rec.settle()
      assertOk(res, "answered early")
      const sent = await waitForTraffic(record, (e) => e.event === "late-progress-sent")
      assert.ok(sent, "the fixture never finished sending its late progress")
      await sleep(300) // an absence cannot be awaited: what the fixture sent would have come by now
      // The one sent before the answer arrives; the five after it never do.
      assert.deepEqual(rec.seen, [{ progress: 1, message: "before" }])
      assert.deepEqual(rec.afterSettle, [])
      const after = await toolNamed(source, `${SERVER}_plain`).execute({})
      assertOk(after, "one\ntwo", "a call after the late progress")
    })
  })
})

// ---------------------------------------------------------------- cancellation

describe("cancellation", { timeout: 30_000 }, () => {
  test("ctx.signal cancels that request id, settles at once, and the late answer is dropped", async (t) => {
    const record = path.join(tempDir(t), "events.jsonl")
    await withSource({ [SERVER]: traffic(record) }, {}, async (source) => {
      const slow = toolNamed(source, `${SERVER}_slow`)
      const { res, neighbour, neighbourStarted, cancelled } = await cancelBesideNeighbour({
        slow,
        events: () => events(record),
        what: "record",
        neighbourArgs: { ms: 2_500 },
        targetArgs: { late: 300 },
        cancelMs: 10_000,
      })
      assert.equal(events(record).filter((e) => e.event === "cancelled").length, 1, "exactly one request was cancelled")

      // A call started right after the abort is in flight when the late answer comes.
      const next = slow.execute({ ms: 800 })
      const late = await waitForTraffic(record, (e) => e.event === "late-answer")
      assert.ok(late, "the fixture never sent its late answer")
      assert.equal(late.requestId, cancelled.requestId)

      // The neighbour gets its own answer.
      assertOk(await neighbour, `done:${neighbourStarted.requestId}`, "the call running beside the cancelled one")
      const nextStarted = events(record).find((e) => e.event === "started" && e.tool === "slow" && e.args?.ms === 800)
      assert.ok(nextStarted, "the call after the cancel never started")
      assertOk(await next, `done:${nextStarted.requestId}`, "the call in flight when the late answer came")
      assert.notEqual(nextStarted.requestId, cancelled.requestId)

      // Still usable afterwards, and the settled result was not changed by the late answer.
      assertOk(await toolNamed(source, `${SERVER}_plain`).execute({}), "one\ntwo", "a call after the cancel")
      assert.equal(res.isError, true)
      assert.ok(!res.output.includes("late:"), `the late answer leaked into the cancelled result: ${res.output}`)
    })
  })
})

// ---------------------------------------------------------------- logging

describe("logging", { timeout: 30_000 }, () => {
  test("notifications/message reaches onLog with the server name, level and data, in order", async () => {
    const logs: Array<{ server: string; level: string; data: unknown }> = []
    const onLog = (server: string, level: string, data: unknown) => logs.push({ server, level, data })
    const entriesA = LOG_ENTRIES
    const entriesB = [{ level: "error", data: { from: "beta" } }]
    await withSource({ alpha: traffic(), beta: traffic() }, { onLog }, async (source) => {
      assertOk(await toolNamed(source, "alpha_log").execute({ entries: entriesA }), "logged 7")
      assertOk(await toolNamed(source, "beta_log").execute({ entries: entriesB }), "logged 1")
      const total = entriesA.length + entriesB.length
      await poll(() => logs.length >= total, 5_000)
      await sleep(100) // an absence cannot be awaited: an entry too many would have come by now
      assert.deepEqual(
        logs.filter((l) => l.server === "alpha"),
        entriesA.map((e) => ({ server: "alpha", ...e })),
      )
      assert.deepEqual(
        logs.filter((l) => l.server === "beta"),
        entriesB.map((e) => ({ server: "beta", ...e })),
      )
      assert.equal(logs.length, total, `unexpected log entries: ${JSON.stringify(logs)}`)
    })
  })

  // A child Node process, so its stderr can be read whole.
  const script = (withOnLog: boolean) => `
import { loadMcp } from "toolnexus"
const levels = ${JSON.stringify(LEVELS)}
const entries = levels.map((level) => ({ level, data: "marker-" + level + "-7f3" }))
const seen = []
// The last entry, emergency, handed on: to onLog, or else printed on stderr.
let heard
const last = new Promise((resolve) => (heard = resolve))
const opts = ${withOnLog ? '{ onLog: (server, level, data) => (seen.push([server, level, data]), level === "emergency" && heard()) }' : "{}"}
const write = process.stderr.write.bind(process.stderr)
process.stderr.write = (chunk, ...rest) => (String(chunk).includes("marker-emergency-") && heard(), write(chunk, ...rest))
const source = await loadMcp({ srv: { command: ${JSON.stringify([NODE, fixture("traffic-server.mjs")])} } }, opts)
try {
  const tool = source.tools.find((t) => t.name === "srv_log")
  const res = await tool.execute({ entries })
  if (res.isError || res.output !== "logged " + entries.length) throw new Error("log call failed: " + JSON.stringify(res))
  // Bounded, and keeping the process up meanwhile: a source alone does not.
  const timer = setTimeout(() => heard(Promise.reject(new Error("the emergency entry was not handed on in 15 s"))), 15_000)
  await last
  clearTimeout(timer)
} finally {
  await source.close()
}
console.log(JSON.stringify({ status: source.status, seen }))
`

  test("without onLog, warning and above go to stderr as one line naming the server; lower levels are not printed", async () => {
    const run = await runNode(script(false))
    assertCleanExit(run)
    assert.deepEqual(JSON.parse(run.stdout.trim()).status, { srv: "connected" })
    for (const level of LEVELS) {
      const marker = `marker-${level}-7f3`
      const lines = linesWith(run.stderr, marker)
      if (LOUD.has(level)) {
        assert.equal(lines.length, 1, `a ${level} message should print exactly one line; stderr:\n${run.stderr}`)
        assert.ok(
          lines[0].startsWith(`[toolnexus] MCP server "srv" ${level}: `),
          `the ${level} line should read [toolnexus] MCP server "srv" ${level}: <data>; got: ${lines[0]}`,
        )
      } else {
        assert.deepEqual(lines, [], `a ${level} message must not be printed; stderr:\n${run.stderr}`)
      }
    }
  })

  test("with onLog, nothing is printed and the messages reach onLog instead", async () => {
    const run = await runNode(script(true))
    assertCleanExit(run)
    assert.deepEqual(linesWith(run.stderr, "marker-"), [], `stderr:\n${run.stderr}`)
    const { seen } = JSON.parse(run.stdout.trim())
    // debug is left out: a client may ask the server for a minimum level (logging/setLevel).
    const aboveDebug = (seen as Array<[string, string, string]>).filter(([, level]) => level !== "debug")
    assert.deepEqual(
      aboveDebug,
      LEVELS.filter((l) => l !== "debug").map((level) => ["srv", level, `marker-${level}-7f3`]),
    )
  })
})

// ---------------------------------------------------------------- rich results

describe("rich results", { timeout: 30_000 }, () => {
  test("non-text content is kept whole in metadata.content; output stays the text; text-only results have none", async () => {
    await withSource({ [SERVER]: traffic() }, {}, async (source) => {
      const res = await toolNamed(source, `${SERVER}_rich`).execute({})
      assertOk(res, "Here is the chart\nand a closing remark")
      assert.ok(res.metadata, "no metadata")
      assert.equal(res.metadata.server, SERVER)
      assert.deepEqual(res.metadata.content, RICH_CONTENT)

      const plain = await toolNamed(source, `${SERVER}_plain`).execute({})
      assertOk(plain, "one\ntwo")
      assert.deepEqual(plain.metadata, { server: SERVER })
    })
  })
})
