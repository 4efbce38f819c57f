// Servers of both protocol eras, each written with an official SDK, through the public API:
// SDK v2 (@modelcontextprotocol/server 2.4.0) over stdio (serveStdio, legacy "serve" and
// "reject") and HTTP (createMcpHandler, legacy "stateless" and "reject"), and SDK v1
// (@modelcontextprotocol/sdk) over stdio and stateful streamable HTTP. Every one serves
// the tools of fixtures/era-tools.mjs. With `"protocol": "auto"` (the default) a server
// that speaks 2026-07-28 is spoken to in that revision, a 2025-era one through initialize.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import {
  createMcpStore,
  listMcpTools,
  loadMcp,
  type Answer,
  type McpSource,
  type Request,
  type ServerConfig,
} from "toolnexus"
import { ERA_TOOLS } from "./fixtures/era-tools.mjs"
import { DEFAULTS_SCHEMA, ELICIT_MESSAGE, ALL_DEFAULTS } from "./fixtures/traffic-tools.mjs"
import { startV1Http } from "./fixtures/v1-server.mjs"
import { startV2Http } from "./fixtures/v2-server.mjs"
import {
  assertGone,
  childPids,
  failureLines,
  fixture,
  NODE,
  poll,
  readRecord,
  ROOT,
  runNode,
  runProcess,
  sleep,
  tempDir,
  toolNamed,
} from "./helpers.js"
import { assertOk, elicited, progressRecorder } from "./traffic-shared.js"

const MODERN = "2026-07-28"
const LEGACY = "2025-11-25"
/** The configured name of the server under test: its tools are `era_<tool>`. */
const NAME = "era"
const TOOLS = ERA_TOOLS.map((t) => t.name)
const prefixed = (tool: string) => `${NAME}_${tool}`

/** What a fixture records: each entry of `ask` and `slow`, and their cancellation. */
interface EraEvent {
  event: "started" | "cancelled"
  tool: string
}

interface Started {
  entry: ServerConfig
  events(): EraEvent[]
}

interface Kind {
  name: string
  /** The version `"protocol": "auto"` must end up speaking. */
  version: string
  /** Starts a server of this kind, stopped when the test ends. */
  start(t: TestContext): Promise<Started>
}

/** A stdio fixture recording its events into a temp file. */
const stdioKind = (name: string, version: string, script: string, ...flags: string[]): Kind => ({
  name,
  version,
  start: async (t) => {
    const record = path.join(tempDir(t), "events.jsonl")
    return {
      entry: { command: [NODE, fixture(script), ...flags, `--record=${record}`] },
      events: () => readRecord<EraEvent>(record),
    }
  },
})

/** An HTTP fixture served from this process. */
const httpKind = (
  name: string,
  version: string,
  serve: () => Promise<{ url: string; events: EraEvent[]; close(): Promise<void> }>,
): Kind => ({
  name,
  version,
  start: async (t) => {
    const server = await serve()
    t.after(() => server.close())
    return { entry: { url: server.url }, events: () => server.events }
  },
})

const v2Stdio = (legacy: string) =>
  stdioKind(`SDK v2 stdio, legacy "${legacy}"`, MODERN, "v2-server.mjs", `--legacy=${legacy}`)
const v2Http = (legacy: string) => httpKind(`SDK v2 HTTP, legacy "${legacy}"`, MODERN, () => startV2Http(legacy))
const v1Stdio = stdioKind("SDK v1 stdio", LEGACY, "v1-server.mjs")
const v1Http = httpKind("SDK v1 stateful HTTP", LEGACY, startV1Http)

const v2Serve = v2Stdio("serve")
const v2StdioReject = v2Stdio("reject")
const v2Stateless = v2Http("stateless")
const v2HttpReject = v2Http("reject")
const KINDS = [v2Serve, v2StdioReject, v2Stateless, v2HttpReject, v1Stdio, v1Http]

/** Why `entry` failed, as listMcpTools reports it: the message of a failed connect assertion. */
async function whyFailed(entry: ServerConfig): Promise<string> {
  const inventory = await listMcpTools({ [NAME]: entry })
  return `${NAME} did not connect: ${inventory.servers[NAME]?.error ?? inventory.status[NAME]}`
}

/** Starts a server of `kind` and loads it with `opts`; both end with the test. */
async function open(t: TestContext, kind: Kind, opts: Parameters<typeof loadMcp>[1] = {}) {
  const server = await kind.start(t)
  const source = await loadMcp({ [NAME]: server.entry }, opts)
  t.after(() => source.close())
  if (source.status[NAME] !== "connected") assert.fail(await whyFailed(server.entry))
  return { ...server, source, tool: (name: string) => toolNamed(source, prefixed(name)) }
}

/** Waits up to 5 s for the events of `tool` to be `expected`, then asserts them. */
async function assertEvents(server: Started, tool: string, expected: EraEvent["event"][], what: string) {
  const of = () =>
    server
      .events()
      .filter((e) => e.tool === tool)
      .map((e) => e.event)
  await poll(() => of().length >= expected.length, 5_000)
  await sleep(300) // an absence cannot be awaited: an event too many would have come by now
  assert.deepEqual(of(), expected, what)
}

for (const kind of KINDS) {
  describe(kind.name, { timeout: 60_000 }, () => {
    test(`listMcpTools lists the tools and speaks ${kind.version}`, async (t) => {
      const { entry } = await kind.start(t)
      const inventory = await listMcpTools({ [NAME]: entry })
      const report = inventory.servers[NAME]
      assert.deepEqual(inventory.status, { [NAME]: "connected" }, report?.error)
      assert.deepEqual(
        inventory.tools[NAME]?.map((t) => t.name),
        TOOLS,
      )
      assert.deepEqual(inventory.tools[NAME]?.find((t) => t.name === "add")?.inputSchema.required, ["a", "b"])
      assert.equal(report?.protocolVersion, kind.version, "the protocol version spoken")
    })

    test("calls give text, structured content and error results", async (t) => {
      const { source, tool } = await open(t, kind)
      assert.deepEqual(
        source.tools.map((t) => t.name),
        TOOLS.map(prefixed),
      )
      assertOk(await tool("echo").execute({ text: "hello era" }), "hello era")
      assertOk(await tool("add").execute({ a: 2, b: 3.5 }), '{"sum":5.5}')
      const failed = await tool("fail").execute({})
      assert.deepEqual([failed.isError, failed.output], [true, "it failed"])
    })

    test("progress reaches onProgress and logs reach onLog", async (t) => {
      const logs: unknown[][] = []
      const { tool } = await open(t, kind, { onLog: (...entry) => logs.push(entry) })
      const progress = progressRecorder()
      assertOk(await tool("progress").execute({}, { onProgress: progress.onProgress }), "progress done")
      assert.deepEqual(progress.seen, [
        { progress: 1, total: 2 },
        { progress: 2, total: 2 },
      ])
      assert.deepEqual(logs, [[NAME, "warning", "halfway"]])
    })

    describe("elicitation", () => {
      const answers: Array<[string, (req: Request) => Promise<Answer>, object]> = [
        [
          "accepted, the schema's defaults filling the rest",
          async (req) => ({ id: req.id, ok: true, data: { name: "Ada" } }),
          { action: "accept", content: { ...ALL_DEFAULTS, name: "Ada" } },
        ],
        ["declined", async (req) => ({ id: req.id, ok: false, reason: "declined" }), { action: "decline" }],
        ["cancelled", async (req) => ({ id: req.id, ok: false, reason: "cancelled" }), { action: "cancel" }],
        [
          "cancelled when waitFor throws",
          async () => Promise.reject(new Error("no person here")),
          { action: "cancel" },
        ],
      ]
      for (const [how, answer, expected] of answers) {
        test(how, async (t) => {
          const seen: Request[] = []
          const waitFor = (req: Request) => (seen.push(req), answer(req))
          const { tool } = await open(t, kind, { waitFor })
          assert.deepEqual(elicited(await tool("ask").execute({})), expected)
          assert.equal(seen.length, 1)
          assert.deepEqual([seen[0]?.kind, seen[0]?.prompt], ["input", ELICIT_MESSAGE])
          assert.deepEqual(seen[0]?.data, { schema: DEFAULTS_SCHEMA })
        })
      }
    })

    test("an abort while waitFor answers settles the call, and the late answer goes nowhere", async (t) => {
      const controller = new AbortController()
      let asked!: () => void
      const questionSeen = new Promise<void>((resolve) => (asked = resolve))
      let answerLate!: () => void
      const waitFor = (req: Request) =>
        new Promise<Answer>((resolve) => {
          answerLate = () => resolve({ id: req.id, ok: true, data: {} })
          asked()
        })
      const server = await open(t, kind, { waitFor })
      const call = server.tool("ask").execute({}, { signal: controller.signal })
      const early = await Promise.race([questionSeen.then(() => undefined), call])
      if (early) assert.fail(`the call settled before waitFor was asked anything: ${early.output}`)
      const abortedAt = Date.now()
      controller.abort()
      const result = await call
      assert.equal(result.isError, true, result.output)
      assert.ok(Date.now() - abortedAt < 2_000, `the aborted call took ${Date.now() - abortedAt} ms to settle`)
      // A 2025-era server holds the call open, so it is told; a modern one holds nothing,
      // and must not see the call again with the answer.
      const expected: EraEvent["event"][] = kind.version === MODERN ? ["started"] : ["started", "cancelled"]
      // Over HTTP the cancellation and the late answer are separate requests, which the
      // server may take in either order: the answer comes once the cancellation is seen.
      if (kind.version !== MODERN) await assertEvents(server, "ask", expected, "the server was told of the abort")
      answerLate()
      await assertEvents(server, "ask", expected, "what the server saw of the aborted call")
    })

    test("an abort of a slow call settles it at once and reaches the server", async (t) => {
      const server = await open(t, kind)
      const controller = new AbortController()
      const call = server.tool("slow").execute({ ms: 30_000 }, { signal: controller.signal })
      const started = await poll(() => server.events().some((e) => e.tool === "slow"), 10_000)
      assert.ok(started, "the slow call never reached the server")
      const abortedAt = Date.now()
      controller.abort()
      const result = await call
      assert.equal(result.isError, true, result.output)
      assert.ok(Date.now() - abortedAt < 2_000, `the aborted call took ${Date.now() - abortedAt} ms to settle`)
      await assertEvents(server, "slow", ["started", "cancelled"], "the server was not told of the abort")
    })

    test(`the store picks up a tool added at runtime and reports ${kind.version}`, async (t) => {
      const { entry } = await kind.start(t)
      const store = createMcpStore({ [NAME]: entry })
      t.after(() => store.close())
      await poll(() => store.status()[NAME]?.state !== "initializing", 15_000)
      const status = store.status()[NAME]
      assert.equal(status?.state, "connected", status?.lastError)
      assert.equal(status?.protocolVersion, kind.version, "the protocol version in status")
      assertOk(await store.callTool(prefixed("grow"), { name: "added" }), "added added")
      const names = () => store.listTools().map((t) => t.name)
      const listed = await poll(() => names().includes(prefixed("added")), 5_000)
      assert.ok(listed, `no ${prefixed("added")} 5 s after it was added: ${names().join(", ")}`)
      assertOk(await store.callTool(prefixed("added"), {}), "added ok")
    })
  })
}

describe("the protocol key", { timeout: 60_000 }, () => {
  for (const kind of [v2StdioReject, v2HttpReject]) {
    test(`"2025-11-25" against a modern-only server (${kind.name}) fails, naming the server and why`, async (t) => {
      const { entry } = await kind.start(t)
      const pinned = { ...entry, protocol: LEGACY }
      const inventory = await listMcpTools({ [NAME]: pinned })
      assert.equal(inventory.status[NAME], "failed")
      assert.match(inventory.servers[NAME]?.error ?? "", /2025-11-25/)
      // loadMcp prints the reason on one line naming the server.
      const run = await runNode(
        `import { loadMcp } from "toolnexus"
         const source = await loadMcp(${JSON.stringify({ [NAME]: pinned })})
         console.log(JSON.stringify(source.status))
         await source.close()`,
      )
      assert.equal(run.stdout.trim(), JSON.stringify({ [NAME]: "failed" }), run.stderr)
      const lines = failureLines(run.stderr, NAME)
      assert.equal(lines.length, 1, run.stderr)
      assert.match(lines[0]!, /2025-11-25/)
    })
  }

  test(`"2025-11-25" speaks the 2025 era to a server that speaks both`, async (t) => {
    const { entry } = await v2Serve.start(t)
    const inventory = await listMcpTools({ [NAME]: { ...entry, protocol: LEGACY } })
    assert.equal(inventory.servers[NAME]?.protocolVersion, LEGACY, inventory.servers[NAME]?.error)
  })

  test(`"2026-07-28" speaks the modern era to a server that speaks both`, async (t) => {
    const { entry } = await v2Serve.start(t)
    const inventory = await listMcpTools({ [NAME]: { ...entry, protocol: MODERN } })
    assert.equal(inventory.servers[NAME]?.protocolVersion, MODERN, inventory.servers[NAME]?.error)
  })

  test(`"auto" takes a discover answer without resultType or caching hints as the modern era`, async () => {
    const entry = { command: [NODE, fixture("big-result.mjs"), "--bare-discover"] }
    const inventory = await listMcpTools({ [NAME]: entry })
    assert.equal(inventory.servers[NAME]?.protocolVersion, MODERN, inventory.servers[NAME]?.error)
  })

  test(`"2026-07-28" against a 2025-era server fails, saying so`, async (t) => {
    const { entry } = await v1Stdio.start(t)
    const inventory = await listMcpTools({ [NAME]: { ...entry, protocol: MODERN } })
    assert.equal(inventory.status[NAME], "failed")
    assert.match(inventory.servers[NAME]?.error ?? "", /2026-07-28/)
  })

  test("any other value is that server's config error; the others still connect", async (t) => {
    const { entry } = await v1Stdio.start(t)
    const config = { bad: { ...entry, protocol: "2024-11-05" }, numeric: { ...entry, protocol: 7 }, good: entry }
    const inventory = await listMcpTools(config)
    assert.deepEqual(inventory.status, { bad: "failed", numeric: "failed", good: "connected" })
    const expected = `"protocol" must be "auto", "2026-07-28" or "2025-11-25", got`
    assert.ok(inventory.servers.bad?.error?.includes(`${expected} "2024-11-05"`), inventory.servers.bad?.error)
    assert.ok(inventory.servers.numeric?.error?.includes(`${expected} a number`), inventory.servers.numeric?.error)
    assert.equal(inventory.servers.bad?.connectMs, undefined, "nothing is started for a config error")
  })
})

test(
  "ten servers of mixed eras in one loadMcp: all connected, each callable, no process left",
  { timeout: 90_000 },
  async (t) => {
    const plan: Array<[string, Kind]> = [
      ["serve1", v2Serve],
      ["serve2", v2Serve],
      ["reject1", v2StdioReject],
      ["reject2", v2StdioReject],
      ["reject3", v2StdioReject],
      ["stateless", v2Stateless],
      ["httpreject", v2HttpReject],
      ["v1a", v1Stdio],
      ["v1b", v1Stdio],
      ["v1http", v1Http],
    ]
    const before = childPids()
    const started = await Promise.all(plan.map(([, kind]) => kind.start(t)))
    const config = Object.fromEntries(plan.map(([name], i) => [name, started[i]!.entry]))
    const source: McpSource = await loadMcp(config)
    let closed = false
    t.after(() => (closed ? undefined : source.close()))
    const connected = Object.fromEntries(plan.map(([name]) => [name, "connected"]))
    assert.deepEqual(source.status, connected)
    const spawned = childPids().filter((pid) => !before.includes(pid))
    assert.equal(spawned.length, 7, `one process per stdio server: ${spawned.join(", ")}`)
    const outputs = await Promise.all(plan.map(([name]) => toolNamed(source, `${name}_echo`).execute({ text: name })))
    assert.deepEqual(
      outputs.map((r) => [r.isError, r.output]),
      plan.map(([name]) => [false, name]),
    )
    await source.close()
    closed = true
    await assertGone(spawned, 5_000)

    const inventory = await listMcpTools(config)
    const versions = Object.fromEntries(plan.map(([name]) => [name, inventory.servers[name]?.protocolVersion]))
    assert.deepEqual(versions, Object.fromEntries(plan.map(([name, kind]) => [name, kind.version])))
    const left = () => childPids().filter((pid) => !before.includes(pid))
    await poll(() => left().length === 0, 10_000)
    assert.deepEqual(left(), [], "child processes left after listMcpTools")
  },
)

test("toolnexus list shows the protocol version spoken with each server", { timeout: 60_000 }, async (t) => {
  const [modern, legacy] = [await v2StdioReject.start(t), await v1Stdio.start(t)]
  const file = path.join(tempDir(t), "mcp.json")
  fs.writeFileSync(file, JSON.stringify({ mcpServers: { modern: modern.entry, legacy: legacy.entry } }))
  const run = await runProcess([path.join(ROOT, "bin", "toolnexus.js"), "list", file])
  const summary = (server: string) => run.stdout.split("\n").find((line) => line.startsWith(`${server}: `))
  const shown = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`
  assert.match(summary("modern") ?? "", /^modern: connected \(7 tools, protocol 2026-07-28, up in \d+ ms\)$/, shown)
  assert.match(summary("legacy") ?? "", /^legacy: connected \(7 tools, protocol 2025-11-25, up in \d+ ms\)$/, shown)
  assert.equal(run.code, 0, shown)
})
