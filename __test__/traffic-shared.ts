// What traffic.test.ts (stdio) and traffic-http.test.ts (streamable HTTP) both check about
// server-to-client traffic, whichever transport carries it. The fixtures' tools and the
// events they record are in fixtures/traffic-tools.mjs.
import assert from "node:assert/strict"
import type { Tool, ToolResult } from "toolnexus"
import type { TrafficEvent } from "./fixtures/traffic-tools.mjs"
import { poll } from "./helpers.js"

/** Asserts a successful result with exactly `output`. */
export function assertOk(res: ToolResult, output: string, what = "the call") {
  assert.deepEqual([res.isError, res.output], [false, output], `${what}: ${JSON.stringify(res)}`)
}

/** Parses the `{ action, content }` JSON an eliciting fixture tool answers with. */
export function elicited(res: ToolResult) {
  assert.equal(res.isError, false, `the eliciting call failed: ${res.output}`)
  return JSON.parse(res.output)
}

/** Log entries at every level above debug, with data of every JSON kind. */
export const LOG_ENTRIES = [
  { level: "info", data: "alpha starting" },
  { level: "notice", data: { phase: "index", files: 12, nested: { ok: true, list: [1, "two", null] } } },
  { level: "warning", data: "disk almost full" },
  { level: "error", data: ["a", 2] },
  { level: "critical", data: 42 },
  { level: "alert", data: { page: "oncall" } },
  { level: "emergency", data: "everything is on fire" },
]

export type Progress = { progress: number; total?: number; message?: string }

/** An `onProgress` that records what it gets, and whether the call had already settled. */
export function progressRecorder() {
  const seen: Progress[] = []
  let settled = false
  const afterSettle: Progress[] = []
  const onProgress = (p: Progress) => {
    // Only the documented fields; absent ones stay absent.
    const picked: Progress = { progress: p.progress }
    if (p.total !== undefined) picked.total = p.total
    if (p.message !== undefined) picked.message = p.message
    seen.push(picked)
    if (settled) afterSettle.push(picked)
  }
  return { seen, afterSettle, onProgress, settle: () => (settled = true) }
}

/**
 * Checks a `progress` call with `steps` steps: the server got a progressToken on it and
 * onProgress saw the bare 0, then every step with its total and message, in order.
 */
export function assertProgressSteps(events: TrafficEvent[], seen: Progress[], steps: number) {
  const started = events.find((e) => e.event === "started" && e.tool === "progress")
  assert.ok(started, "the progress tool never started")
  assert.ok(
    typeof started.progressToken === "string" || typeof started.progressToken === "number",
    `progressToken on the call: ${JSON.stringify(started.progressToken)}`,
  )
  const expected: Progress[] = [
    { progress: 0 },
    ...Array.from({ length: steps }, (_, i) => ({
      progress: i + 1,
      total: steps,
      message: `step ${i + 1} of ${steps}`,
    })),
  ]
  assert.deepEqual(seen, expected)
}

const hasArgs = (e: TrafficEvent, args: Record<string, unknown>) =>
  Object.entries(args).every(([key, value]) => e.args?.[key] === value)

/**
 * Starts a `slow` call with `neighbourArgs`, then one with `targetArgs` that is aborted once
 * both have started. Checks the aborted call settles at once as an error and that the
 * server got exactly the target's id in notifications/cancelled (within `cancelMs`).
 * `events` reads what the fixture has recorded; `what` names it in failure messages.
 */
export async function cancelBesideNeighbour(opts: {
  slow: Tool
  events: () => TrafficEvent[]
  what: string
  neighbourArgs: Record<string, unknown>
  targetArgs: Record<string, unknown>
  cancelMs: number
}) {
  const { slow, events, what } = opts
  // Another call in flight first, so the cancelled one is not simply the only request.
  const neighbour = slow.execute(opts.neighbourArgs)
  const controller = new AbortController()
  const pending = slow.execute(opts.targetArgs, { signal: controller.signal })
  const started = await poll(() => {
    const all = events().filter((e) => e.event === "started" && e.tool === "slow")
    return all.length === 2 ? all : undefined
  }, 10_000)
  assert.ok(started, `both slow calls should start; ${what}: ${JSON.stringify(events())}`)
  const target = started.find((e) => hasArgs(e, opts.targetArgs))
  const neighbourStarted = started.find((e) => hasArgs(e, opts.neighbourArgs))
  assert.ok(target && neighbourStarted, `${what}: ${JSON.stringify(started)}`)

  const abortedAt = Date.now()
  controller.abort(new Error("the user pressed stop"))
  const res = await pending
  const settleMs = Date.now() - abortedAt
  assert.equal(res.isError, true, `an aborted call must be an error result: ${JSON.stringify(res)}`)
  assert.ok(settleMs < 1_000, `the aborted call settled ${settleMs} ms after the abort`)

  const cancelled = await poll(() => events().find((e) => e.event === "cancelled"), opts.cancelMs)
  assert.ok(cancelled, `no notifications/cancelled reached the server; ${what}: ${JSON.stringify(events())}`)
  assert.deepEqual(cancelled.requestId, target.requestId, "notifications/cancelled names another request")
  return { res, neighbour, neighbourStarted, cancelled }
}
