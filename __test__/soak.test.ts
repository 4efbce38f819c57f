// The soak run's short mode (bench/soak.mjs --short: 90 s of traffic through a store of 20
// servers that crash, change their lists, sit behind HTTP and OAuth, with aborts and
// timeouts and agent views coming and going), so that CI checks its targets: every call
// settles, no zombie, and fds, threads and processes back at their baseline once the store
// closes. The memory slope needs the hour-long run (bench/README.md).
import assert from "node:assert/strict"
import { test } from "node:test"
import { linesWith, runProcess } from "./helpers.js"

test("the soak's short mode meets its targets", { timeout: 420_000 }, async () => {
  const run = await runProcess(["bench/soak.mjs", "--short"], { timeout: 400_000 })
  const report = `stdout: ${run.stdout}\nstderr: ${run.stderr.slice(-4000)}`
  assert.equal(run.timedOut, false, report)
  assert.equal(run.code, 0, report)
  assert.match(run.stdout, /^soak: PASS$/m, report)
  for (const target of [
    "every call settles",
    "no lingering zombie",
    "fds back to baseline",
    "threads back to baseline",
    "processes back to baseline",
  ]) {
    assert.equal(linesWith(run.stdout, `| ${target}`).filter((line) => line.includes("| pass")).length, 1, target)
  }
  // The traffic it judged: calls of every kind settled, and the servers' processes ran.
  const outcomes = JSON.parse(/settled (\{.*\}); guest/.exec(run.stdout)?.[1] ?? "{}")
  for (const kind of ["plain ok", "aborted isError", "timed out isError"]) assert.ok(outcomes[kind] > 0, kind)
  const peak = Number(/processes back to baseline.*?→ (\d+) →/.exec(run.stdout)?.[1])
  assert.ok(peak >= 15, `${peak} server processes at the peak`)
})
