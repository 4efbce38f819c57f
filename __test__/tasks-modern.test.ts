// Tasks in the 2026-07-28 era: the `io.modelcontextprotocol/tasks` extension, against the
// rmcp reference server (`refserver/`, built by `npm run test:rust`) run with `--tasks`,
// over stdio and streamable HTTP. The server decides which calls become tasks; toolnexus
// polls `tasks/get`, answers what a task asks with `tasks/update`, and cancels with
// `tasks/cancel`.
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { test, type TestContext } from "node:test"
import { loadMcp } from "toolnexus"
import { poll, ROOT, tempDir, toolNamed } from "./helpers.js"

const REFSERVER = join(ROOT, "target/debug/toolnexus-refserver")

function logOf(t: TestContext) {
  const log = join(tempDir(t), "log")
  const lines = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [])
  return { log, lines }
}

/** The refserver over streamable HTTP, its URL from its first line; stopped when the test ends. */
async function httpServer(t: TestContext, log: string): Promise<string> {
  const child = spawn(REFSERVER, ["--tasks", "--task-log", log, "--http"], { stdio: ["pipe", "pipe", "inherit"] })
  t.after(() => child.kill())
  const [line] = await createInterface({ input: child.stdout! })
    [Symbol.asyncIterator]()
    .next()
    .then((r) => [r.value])
  return String(line).trim()
}

for (const transport of ["stdio", "http"] as const) {
  async function open(t: TestContext, asked: string[] = []) {
    assert.ok(existsSync(REFSERVER), `${REFSERVER} is built by npm run test:rust (cargo test --workspace)`)
    const { log, lines } = logOf(t)
    const entry =
      transport === "stdio" ? { command: [REFSERVER, "--tasks", "--task-log", log] } : { url: await httpServer(t, log) }
    const source = await loadMcp(
      { r: { ...entry, protocol: "2026-07-28" as const } },
      { waitFor: async (request) => (asked.push(request.prompt), { id: request.id, ok: true, data: { go: true } }) },
    )
    t.after(() => source.close())
    assert.deepEqual(source.status, { r: "connected" }, JSON.stringify(source.status))
    return { source, lines }
  }

  test(`2026 (${transport}): a call the server makes a task is polled to its result`, async (t) => {
    const { source } = await open(t)
    const result = await toolNamed(source, "r_job").execute({ ms: 100 }, { timeout: 60 })
    assert.deepEqual(result, { output: "job done", isError: false, metadata: { server: "r" } })
    // The other tools are plain calls as before.
    assert.equal((await toolNamed(source, "r_echo").execute({ text: "hi" })).output, "hi")
  })

  test(`2026 (${transport}): what a task asks goes to waitFor and back with tasks/update`, async (t) => {
    const asked: string[] = []
    const { source } = await open(t, asked)
    const result = await toolNamed(source, "r_confirm").execute({})
    assert.equal(result.isError, false, result.output)
    assert.equal(result.output, 'answered {"action":"accept","content":{"go":true}}')
    assert.deepEqual(asked, ["Go on?"])
  })

  test(`2026 (${transport}): an abort cancels the task on the server; maxTotalTimeout ends one`, async (t) => {
    const { source, lines } = await open(t)
    const abort = new AbortController()
    const running = toolNamed(source, "r_endless").execute({}, { signal: abort.signal })
    // A fixed wait: no event shows the call has become a task (the refserver logs only cancels).
    setTimeout(() => abort.abort(), 100)
    const result = await running
    assert.equal(result.output, 'MCP server "r": tools/call "endless" was aborted')
    assert.ok(await poll(() => lines().length === 1, 5_000), "the server saw tasks/cancel")
    const bounded = await toolNamed(source, "r_endless").execute({}, { maxTotalTimeout: 200 })
    assert.match(
      bounded.output,
      /^MCP server "r" did not finish tools\/call "endless" \(task "task-2"\) within its maxTotalTimeout of 200 ms$/,
    )
    assert.ok(await poll(() => lines().length === 2, 5_000))
  })
}
