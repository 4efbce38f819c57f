// Bounds and lifecycles under hostile servers: nothing a server does grows memory without
// bound or leaves a connection or process behind once its server has failed or closed.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { loadMcp } from "toolnexus"
import { startElicitHttp } from "./fixtures/elicit-http.mjs"
import { startHostileLegacy } from "./fixtures/hostile-legacy.mjs"
import { fixture, local, NODE, poll, sleep, timed, toolNamed } from "./helpers.js"

const T = { timeout: 60_000 }
const MiB = 1 << 20

/** Keeps the JS thread busy for `ms`, as a host doing heavy synchronous work does. */
function busy(ms: number) {
  const until = Date.now() + ms
  while (Date.now() < until) {}
}

const flood = () => ({ command: [NODE, fixture("flood.mjs")] })

describe("legacy HTTP+SSE", () => {
  test("a connect that times out lets go of its event stream", T, async () => {
    const srv = await startHostileLegacy("silent")
    try {
      const source = await loadMcp({ old: { url: srv.url, timeout: 1_000 } })
      assert.deepEqual(source.status, { old: "failed" })
      await source.close()
      const released = await poll(() => srv.streams.opened > 0 && srv.streams.closed === srv.streams.opened, 3_000)
      assert.ok(released, `event streams still open: ${JSON.stringify(srv.streams)}`)
    } finally {
      await srv.close()
    }
  })

  test("an endless event fails the server at once, in bounded memory", T, async () => {
    const srv = await startHostileLegacy("flood")
    try {
      const rss = process.memoryUsage.rss()
      const { value: source, ms } = await timed(() => loadMcp({ flood: { url: srv.url, timeout: 30_000 } }))
      const grown = (process.memoryUsage.rss() - rss) / MiB
      assert.deepEqual(source.status, { flood: "failed" })
      await source.close()
      assert.ok(ms < 15_000, `failed only after ${ms} ms`)
      assert.ok(grown < 256, `RSS grew by ${grown.toFixed(0)} MiB`)
      assert.ok(srv.streams.written < 256 * MiB, `the client read ${srv.streams.written / MiB} MiB`)
    } finally {
      await srv.close()
    }
  })
})

describe("stdio", () => {
  test("calls to a server that stops reading its input fail at once past a bounded backlog", T, async () => {
    const source = await loadMcp({ stuck: { command: [NODE, fixture("stops-reading.mjs")], timeout: 20_000 } })
    try {
      assert.deepEqual(source.status, { stuck: "connected" })
      const echo = source.tools[0]!
      const text = "x".repeat(MiB)
      const rss = process.memoryUsage.rss()
      const started = Date.now()
      let refused: { output: string; ms: number } | undefined
      for (let i = 0; i < 160 && !refused; i++) {
        void echo.execute({ text }).then((r) => {
          refused ??= { output: r.output, ms: Date.now() - started }
        })
        await new Promise((resolve) => setImmediate(resolve))
      }
      const first = await poll(() => refused, 5_000)
      assert.ok(first, "no call failed although the server reads nothing")
      assert.match(
        first.output,
        /^MCP server "stuck" is not reading its input \(\d+ MiB are waiting for it\); tools\/call "echo" was not sent$/,
      )
      const grown = (process.memoryUsage.rss() - rss) / MiB
      assert.ok(grown < 200, `RSS grew by ${grown.toFixed(0)} MiB`)
    } finally {
      await source.close()
    }
  })
  test("a 64 MiB result arrives whole", T, async () => {
    const entry = { command: [NODE, fixture("big-result.mjs")], protocol: "2026-07-28" as const }
    const source = await loadMcp({ big: entry })
    try {
      const result = await source.tools[0]!.execute({ bytes: 64 * MiB })
      assert.equal(result.isError, false, result.output.slice(0, 200))
      assert.equal(result.output.length, 64 * MiB)
    } finally {
      await source.close()
    }
  })
})

describe("callbacks while the JS thread is busy", () => {
  test("a call whose progress outgrows the queue is given up and its server told", T, async () => {
    const source = await loadMcp({ f: flood() })
    try {
      let seen = 0
      const pending = toolNamed(source, "f_progress").execute(
        { count: 1_000, kib: 64 },
        { onProgress: () => void seen++ },
      )
      busy(2_000)
      const result = await pending
      assert.equal(
        result.output,
        'MCP server "f" sent progress for tools/call "progress" faster than the host could take it; the call was given up',
      )
      assert.equal(result.isError, true)
      assert.ok(seen < 1_000, `all ${seen} notifications were queued`)
    } finally {
      await source.close()
    }
  })

  test("log messages slow the server down instead of piling up, and all arrive in order", T, async () => {
    const seen: number[] = []
    const source = await loadMcp(
      { f: flood() },
      { onLog: (_server, _level, data) => void seen.push((data as { i: number }).i) },
    )
    try {
      const rss = process.memoryUsage.rss()
      const pending = toolNamed(source, "f_log").execute({ count: 4_000, kib: 32 })
      busy(4_000)
      const grown = (process.memoryUsage.rss() - rss) / MiB
      const result = await pending
      assert.equal(result.output, "done")
      // Piled up, the 4,000 messages of 32 KiB would hold 250 MiB (their data and their
      // line); bounded, the queue holds 4 MiB of them, and what the allocator, the
      // reader's buffers and a loaded machine's scheduling add stays far below a quarter.
      assert.ok(grown < 64, `RSS grew by ${grown.toFixed(0)} MiB while JS was busy`)
      await poll(() => seen.length === 4_000, 45_000)
      assert.equal(seen.length, 4_000)
      assert.ok(
        seen.every((i, at) => i === at + 1),
        "log messages out of order",
      )
    } finally {
      await source.close()
    }
  })
})

describe("maxTotalTimeout", () => {
  test("caps a call that progress keeps alive, from the config and per call", T, async () => {
    const source = await loadMcp({ p: { ...local(), maxTotalTimeout: 900 } })
    try {
      const progress = toolNamed(source, "p_progress")
      const capped = await timed(() => progress.execute({ steps: 60, interval: 50 }))
      assert.equal(
        capped.value.output,
        'MCP server "p" did not finish tools/call "progress" within its maxTotalTimeout of 900 ms',
      )
      assert.ok(capped.ms < 2_500, `took ${capped.ms} ms`)
      const perCall = await timed(() => progress.execute({ steps: 60, interval: 50 }, { maxTotalTimeout: 500 }))
      assert.equal(
        perCall.value.output,
        'MCP server "p" did not finish tools/call "progress" within its maxTotalTimeout of 500 ms',
      )
      // Progress alone keeps a call alive past its timeout, as long as the cap allows.
      const allowed = await progress.execute({ steps: 16, interval: 50 }, { timeout: 300, maxTotalTimeout: 60_000 })
      assert.deepEqual([allowed.isError, allowed.output], [false, "done after 16 steps"])
      const refused = await progress.execute({}, { maxTotalTimeout: "1s" as unknown as number })
      assert.equal(refused.output, 'MCP server "p": ctx.maxTotalTimeout must be a number of milliseconds, got string')
    } finally {
      await source.close()
    }
  })
})

describe("elicitation", () => {
  test("over streamable HTTP, a pending elicitation pauses only the call it came for", T, async () => {
    const srv = await startElicitHttp()
    let asked!: () => void
    const question = new Promise<void>((resolve) => (asked = resolve))
    const waitFor = async (request: { id: string }) => {
      asked()
      await sleep(2_500) // a person slower than the call's timeout: the duration is the point
      return { id: request.id, ok: false, reason: "declined" as const }
    }
    const source = await loadMcp({ e: { url: srv.url } }, { waitFor })
    try {
      assert.deepEqual(source.status, { e: "connected" })
      const asking = toolNamed(source, "e_ask").execute({}, { timeout: 1_000 })
      await question
      const other = await timed(() => toolNamed(source, "e_sleep").execute({ ms: 1_500 }, { timeout: 500 }))
      assert.equal(other.value.output, 'MCP server "e" did not answer tools/call "sleep" within 500 ms')
      assert.ok(other.ms < 1_400, `the other call waited ${other.ms} ms`)
      // The call being answered stands still for as long as the person takes.
      const answered = await asking
      assert.deepEqual([answered.isError, answered.output], [false, "decline"])
    } finally {
      await source.close()
      await srv.close()
    }
  })
})
