// Long-running tools as tasks (2025-11-25 experimental tasks): a tool whose
// `execution.taskSupport` is "required" (or "optional", with `ctx.task`) is called as a
// task and polled to its end, against server-everything's `simulate-research-query` and a
// fixture written with the official SDK v1 that logs what it receives.
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { once } from "node:events"
import { createServer } from "node:net"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { test, type TestContext } from "node:test"
import { createMcpStore, loadMcp, type McpSource } from "toolnexus"
import { fixture, NODE, poll, ROOT, runNode, tempDir, toolNamed } from "./helpers.js"

const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const everything = { command: [NODE, EVERYTHING] }

/** server-everything over streamable HTTP on a free loopback port, stopped when the test ends. */
async function everythingOverHttp(t: TestContext): Promise<{ url: string }> {
  // It listens on $PORT and says which only as given, so a free port is found first.
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
    probe.on("error", reject)
  })
  const child = spawn(NODE, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  })
  t.after(() => void child.kill())
  await new Promise<void>((resolve, reject) => {
    let said = ""
    child.stderr.on("data", (chunk) => {
      said += chunk
      if (said.includes("listening on port")) resolve()
    })
    child.on("exit", (code) => reject(new Error(`server-everything exited with ${code}: ${said}`)))
  })
  return { url: `http://127.0.0.1:${port}/mcp` }
}

/** The task fixture over `transport` (`json`: HTTP answering with JSON bodies), with its
 * log of requests and cancelled tasks. */
async function taskServer(t: TestContext, transport: "stdio" | "http" | "json") {
  const log = join(tempDir(t), "log")
  const args = [fixture("task-server.mjs"), `--log=${log}`]
  const lines = () => {
    try {
      return readFileSync(log, "utf8").split("\n").filter(Boolean)
    } catch {
      return []
    }
  }
  if (transport === "stdio") return { entry: { command: [NODE, ...args] }, lines }
  const flags = transport === "json" ? ["--http", "--json"] : ["--http"]
  const child = spawn(NODE, [...args, ...flags], { stdio: ["ignore", "pipe", "inherit"] })
  t.after(() => void child.kill())
  const [url] = (await once(createInterface({ input: child.stdout }), "line")) as [string]
  return { entry: { url }, lines }
}

async function open(t: TestContext, servers: object, opts?: Parameters<typeof loadMcp>[1]): Promise<McpSource> {
  const source = await loadMcp(servers, opts)
  t.after(() => source.close())
  assert.deepEqual(
    Object.values(source.status),
    Object.keys(servers).map(() => "connected"),
    JSON.stringify(source.status),
  )
  return source
}

for (const transport of ["stdio", "http"] as const) {
  test(`server-everything's simulate-research-query is listed with its execution and runs as a task to its report (${transport})`, async (t) => {
    const source = await open(t, { e: transport === "stdio" ? everything : await everythingOverHttp(t) })
    const tool = await poll(() => source.tools.find((x) => x.name === "e_simulate-research-query"), 5_000)
    assert.ok(tool, "the task tool is listed")
    assert.deepEqual(tool.execution, { taskSupport: "required" })
    const result = await tool.execute({ topic: "tides" })
    assert.equal(result.isError, false, result.output)
    assert.match(result.output, /^# Research Report: tides/)
    assert.equal(result.metadata?.server, "e")
  })
}

test("an ambiguous research query asks waitFor through tasks/result, and goes on with the answer", async (t) => {
  const asked: string[] = []
  const source = await open(
    t,
    { e: everything },
    {
      waitFor: async (request) => (
        asked.push(request.prompt),
        { id: request.id, ok: true, data: { interpretation: "snake" } }
      ),
    },
  )
  const tool = await poll(() => source.tools.find((x) => x.name === "e_simulate-research-query"), 5_000)
  assert.ok(tool)
  const result = await tool.execute({ topic: "python", ambiguous: true })
  assert.equal(result.isError, false, result.output)
  assert.match(result.output, /^# Research Report: python \(snake\)/)
  assert.equal(asked.length, 1)
  assert.match(asked[0], /multiple interpretations/)
})

for (const transport of ["stdio", "http", "json"] as const) {
  test(`a task's progress reaches onProgress, and its result reads as a plain call's (${transport})`, async (t) => {
    const server = await taskServer(t, transport)
    const source = await open(t, { k: server.entry })
    const steps: string[] = []
    const result = await toolNamed(source, "k_count").execute(
      { steps: 3, ms: 30 },
      { onProgress: (p) => steps.push(`${p.progress}/${p.total} ${p.message}`) },
    )
    assert.deepEqual(result, { output: "counted 3", isError: false, metadata: { server: "k" } })
    assert.deepEqual(steps, ["1/3 step 1", "2/3 step 2", "3/3 step 3"])
    const seen = server.lines()
    assert.ok(seen.includes("tools/call count task"), seen.join("\n"))
    assert.ok(seen.includes("tasks/get") && seen.includes("tasks/result"), seen.join("\n"))
  })

  test(`a task is polled at the server's pollInterval (${transport})`, async (t) => {
    const server = await taskServer(t, transport)
    const source = await open(t, { k: server.entry })
    // 300 ms of work: polled every 20 ms, not once after the 1 s used without an interval.
    const result = await toolNamed(source, "k_count").execute({ steps: 5, ms: 60 })
    assert.equal(result.output, "counted 5")
    const gets = server.lines().filter((line) => line === "tasks/get")
    assert.ok(gets.length >= 3, server.lines().join("\n"))
  })

  test(`aborting a task cancels it on the server (${transport})`, async (t) => {
    const server = await taskServer(t, transport)
    const source = await open(t, { k: server.entry })
    const abort = new AbortController()
    const running = toolNamed(source, "k_forever").execute({}, { signal: abort.signal })
    assert.ok(await poll(() => server.lines().includes("tasks/get"), 5_000), "polled first")
    abort.abort()
    const result = await running
    assert.deepEqual(result, {
      output: 'MCP server "k": tools/call "forever" was aborted',
      isError: true,
      metadata: { server: "k", code: "TOOLNEXUS_ABORTED" },
    })
    const cancelled = await poll(() => server.lines().find((line) => line.startsWith("cancelled ")), 5_000)
    assert.ok(cancelled, server.lines().join("\n"))
    assert.ok(server.lines().includes("tasks/cancel"))
  })

  test(`maxTotalTimeout ends a task that never ends, naming the server, and cancels it (${transport})`, async (t) => {
    const server = await taskServer(t, transport)
    const source = await open(t, { k: server.entry })
    const result = await toolNamed(source, "k_forever").execute({}, { maxTotalTimeout: 300 })
    assert.equal(result.isError, true)
    assert.match(
      result.output,
      /^MCP server "k" did not finish tools\/call "forever" \(task "[^"]+"\) within its maxTotalTimeout of 300 ms$/,
    )
    assert.ok(await poll(() => server.lines().some((line) => line.startsWith("cancelled ")), 5_000))
  })

  test(`a timeout bounds each poll, not the task: a task longer than it finishes (${transport})`, async (t) => {
    const server = await taskServer(t, transport)
    const source = await open(t, { k: server.entry })
    // 6 steps of 100 ms outlast a 250 ms timeout; each poll is answered at once.
    const result = await toolNamed(source, "k_count").execute({ steps: 6, ms: 100 }, { timeout: 250 })
    assert.equal(result.isError, false, result.output)
    assert.equal(result.output, "counted 6")
  })

  test(`a poll that stalls mid-task times out naming the server and the task, and the task is cancelled (${transport})`, async (t) => {
    const server = await taskServer(t, transport)
    const source = await open(t, { k: server.entry })
    const result = await toolNamed(source, "k_stall").execute({}, { timeout: 300 })
    assert.equal(result.isError, true)
    assert.match(result.output, /^MCP server "k" did not answer tools\/call "stall" \(task "[^"]+"\) within 300 ms$/)
    assert.ok(await poll(() => server.lines().includes("tasks/cancel"), 5_000), server.lines().join("\n"))
    // The session goes on: the next call is answered.
    assert.equal((await toolNamed(source, "k_plain").execute({})).output, "plain")
  })

  test(`a server that forgets a task gives an error result naming it (${transport})`, async (t) => {
    const server = await taskServer(t, transport)
    const source = await open(t, { k: server.entry })
    const result = await toolNamed(source, "k_forget").execute({})
    assert.equal(result.isError, true)
    assert.match(result.output, /^MCP server "k" answered tools\/call "forget" \(task "[^"]+"\) with an error: /)
  })

  test(`an optional tool is a plain call unless ctx.task asks, and a forbidden one always is (${transport})`, async (t) => {
    const server = await taskServer(t, transport)
    const source = await open(t, { k: server.entry })
    const either = toolNamed(source, "k_either")
    assert.deepEqual(either.execution, { taskSupport: "optional" })
    assert.equal((await either.execute({})).output, "ran as a task")
    const calls = () => server.lines().filter((line) => line.startsWith("tools/call") || line.startsWith("tasks/"))
    assert.deepEqual(calls(), ["tools/call either"])
    assert.equal((await either.execute({}, { task: true })).output, "ran as a task")
    assert.deepEqual(calls().slice(0, 2), ["tools/call either", "tools/call either task"])
    assert.ok(calls().includes("tasks/result"), calls().join("\n"))
    const plain = toolNamed(source, "k_plain")
    assert.deepEqual(plain.execution, { taskSupport: "forbidden" })
    assert.equal((await plain.execute({}, { task: true })).output, "plain")
    assert.equal(calls().at(-1), "tools/call plain")
    const refused = await either.execute({}, { task: "yes" as unknown as boolean })
    assert.equal(refused.output, 'MCP server "k": ctx.task must be a boolean, got string')
  })

  test(`a store's call of a task tool is polled the same way (${transport})`, async (t) => {
    const server = await taskServer(t, transport)
    const store = createMcpStore({ k: server.entry })
    t.after(() => store.close())
    await store.listToolsAsync()
    const result = await store.callTool("k_count", { steps: 2, ms: 10 })
    assert.equal(result.isError, false, result.output)
    assert.equal(result.output, "counted 2")
    assert.ok(server.lines().includes("tasks/result"))
  })
}

test("README example: a required task tool of server-everything", async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")
  const code = /<!-- runs as a test: tasks -->\n```js\n([\s\S]*?)```/.exec(readme)?.[1]
  assert.ok(code, "README has the tasks example")
  const run = await runNode(code)
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stdout, "required\n# Research Report: tides\n")
})
