// Tasks through the gateway (the 2026-07-28 tasks extension): a client that declares the
// extension and calls a tool that may run as a task upstream (a 2025 server's listing
// allows one; a 2026 server of the extension decides) gets a task of the gateway's at once, polls it with tasks/get to its result, answers what the upstream
// asks meanwhile with tasks/update, and stops it with tasks/cancel, which reaches the
// upstream. Other calls, and clients that do not declare the extension, get results.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test } from "node:test"
import { fixture, NODE, poll, ROOT, tempDir } from "./helpers.js"
import { modern, served, show, type Raw } from "./serve-helpers.js"

const REFSERVER = path.join(ROOT, "target/debug/toolnexus-refserver")
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } }
const ASKING = { ...TASKS, elicitation: { form: {} } }

let nextId = 1
/** One 2026-07-28 request of a client with `capabilities`; its result, failing on an error. */
async function request(url: string, method: string, params: object, capabilities: object = ASKING) {
  const raw = await modern(url, method, params as Record<string, unknown>, nextId++, capabilities)
  assert.ok(raw.rpc?.result, show(raw))
  return raw.rpc.result
}

const call = (url: string, name: string, args: object = {}, capabilities: object = ASKING) =>
  request(url, "tools/call", { name, arguments: args }, capabilities)

/** tasks/get of `taskId` until `done` holds of it; the last answer. */
async function until(url: string, taskId: string, done: (task: Record<string, any>) => boolean) {
  let task: Record<string, any> = {}
  await poll(async () => done((task = await request(url, "tasks/get", { taskId }))), 15_000)
  return task
}

const upstreams = (dir: string) => ({
  tasks: { command: [NODE, fixture("task-server.mjs"), `--log=${path.join(dir, "tasks.log")}`] },
})

describe("serveMcp: tasks", { timeout: 60_000 }, () => {
  test("a task-capable call becomes a task polled to its result; other calls answer directly", async (t) => {
    const { url } = await served(t, upstreams, { store: { elicitation: true } })
    const task = await call(url, "tasks_count", { steps: 3, ms: 20 })
    assert.equal(task.resultType, "task", JSON.stringify(task))
    assert.match(task.taskId, /^[0-9a-f]{32}$/)
    assert.equal(task.status, "working")
    assert.ok(task.ttlMs > 0 && task.pollIntervalMs > 0, JSON.stringify(task))
    const done = await until(url, task.taskId, (x) => x.status !== "working")
    assert.equal(done.status, "completed", JSON.stringify(done))
    assert.deepEqual(done.result.content, [{ type: "text", text: "counted 3" }])

    const plain = await call(url, "tasks_plain")
    assert.equal(plain.resultType, "complete")
    assert.deepEqual(plain.content, [{ type: "text", text: "plain" }])

    const undeclared = await call(url, "tasks_count", { steps: 1, ms: 1 }, {})
    assert.equal(undeclared.resultType, "complete", JSON.stringify(undeclared))
    assert.deepEqual(undeclared.content, [{ type: "text", text: "counted 1" }])
  })

  test("an rmcp upstream of the 2026 extension: its tasks become the gateway's, asking and cancelled through it", async (t) => {
    const log = path.join(tempDir(t), "ref.log")
    const ref = { ref: { command: [REFSERVER, "--tasks", "--task-log", log] } }
    const { url } = await served(t, ref, { store: { elicitation: true } })
    const job = await call(url, "ref_job", { ms: 50 })
    assert.equal(job.resultType, "task", JSON.stringify(job))
    const done = await until(url, job.taskId, (x) => x.status !== "working")
    assert.deepEqual(done.result?.content, [{ type: "text", text: "job done" }], JSON.stringify(done))

    const confirm = await call(url, "ref_confirm")
    const asking = await until(url, confirm.taskId, (x) => x.status === "input_required")
    const [[key, asked]] = Object.entries(asking.inputRequests as Record<string, any>)
    assert.equal(asked.params.message, "Go on?")
    const go = { action: "accept", content: { go: true } }
    await request(url, "tasks/update", { taskId: confirm.taskId, inputResponses: { [key]: go } })
    const answered = await until(url, confirm.taskId, (x) => x.status === "completed")
    assert.deepEqual(answered.result.content, [{ type: "text", text: `answered ${JSON.stringify(go)}` }])

    const endless = await call(url, "ref_endless")
    await request(url, "tasks/cancel", { taskId: endless.taskId })
    assert.equal((await until(url, endless.taskId, (x) => x.status !== "working")).status, "cancelled")
    await poll(() => fs.existsSync(log) && /^cancelled /m.test(fs.readFileSync(log, "utf8")), 10_000)
    assert.match(fs.readFileSync(log, "utf8"), /^cancelled /m, "the upstream's task was cancelled")
  })

  test("tasks/cancel stops the task and the upstream's; an unknown task is refused", async (t) => {
    const { url, dir } = await served(t, upstreams, { store: { elicitation: true } })
    const task = await call(url, "tasks_forever")
    assert.equal(task.resultType, "task", JSON.stringify(task))
    await until(url, task.taskId, (x) => x.status === "working")
    await request(url, "tasks/cancel", { taskId: task.taskId })
    const cancelled = await until(url, task.taskId, (x) => x.status !== "working")
    assert.equal(cancelled.status, "cancelled")
    const log = path.join(dir, "tasks.log")
    await poll(() => fs.existsSync(log) && /^cancelled /m.test(fs.readFileSync(log, "utf8")), 10_000)

    const unknown: Raw = await modern(url, "tasks/get", { taskId: "nope" }, nextId++, ASKING)
    assert.match(unknown.rpc?.error?.message ?? "", /no task "nope"/, show(unknown))
  })
})
