// Servers written with the official SDK v2 (@modelcontextprotocol/server 2.4.0) in each
// of its serving modes, over stdio (serveStdio) and HTTP (createMcpHandler). The modes
// that still serve the 2025 era work today; the modern-only ones wait for the 2026-07-28
// revision and run as todo until it lands.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { listMcpTools, loadMcp, type Answer, type McpSource, type Request } from "toolnexus"
import { DEFAULTS_SCHEMA, ELICIT_MESSAGE, ALL_DEFAULTS } from "./fixtures/traffic-tools.mjs"
import { startV2Http } from "./fixtures/v2-server.mjs"
import { fixture, NODE } from "./helpers.js"
import { assertOk, elicited, progressRecorder } from "./traffic-shared.js"

const TOOLS = ["echo", "add", "fail", "ask", "progress"]
const MODERN_ONLY = "a modern-only server needs the 2026-07-28 revision (issue 10)"

interface Mode {
  name: string
  /** Gives the config entry of a server in this mode, and how to stop what it started. */
  start(): Promise<{ entry: object; stop(): Promise<void> }>
  todo?: string
  /** Why elicitation cannot work in this mode yet, if it cannot. */
  elicitationTodo?: string
}

const stdio = (legacy: string): Mode => ({
  name: `stdio, legacy: "${legacy}"`,
  start: async () => ({
    entry: { command: [NODE, fixture("v2-server.mjs"), `--legacy=${legacy}`] },
    stop: async () => {},
  }),
  todo: legacy === "reject" ? MODERN_ONLY : undefined,
})

const overHttp = (legacy: string): Mode => ({
  name: `HTTP, legacy: "${legacy}"`,
  start: async () => {
    const server = await startV2Http(legacy)
    return { entry: { url: server.url }, stop: server.close }
  },
  todo: legacy === "reject" ? MODERN_ONLY : undefined,
  // Each 2025 request meets a fresh server instance that never saw initialize, so it
  // cannot know the client offers elicitation; per-request capabilities are modern.
  elicitationTodo:
    legacy === "stateless" ? "a stateless 2025 server cannot see the client's capabilities (issue 10)" : undefined,
})

const MODES = [stdio("serve"), stdio("reject"), overHttp("stateless"), overHttp("reject")]

/** Starts a server in `mode`, loads it as `v2` with `opts`, runs `fn`, closes everything. */
async function withServer(mode: Mode, opts: Parameters<typeof loadMcp>[1], fn: (source: McpSource) => Promise<void>) {
  const server = await mode.start()
  const source = await loadMcp({ v2: server.entry }, opts)
  try {
    assert.deepEqual(source.status, { v2: "connected" })
    await fn(source)
  } finally {
    await source.close()
    await server.stop()
  }
}

const tool = (source: McpSource, name: string) => {
  const found = source.tools.find((t) => t.name === `v2_${name}`)
  assert.ok(found, `no tool v2_${name} in ${source.tools.map((t) => t.name)}`)
  return found
}

for (const mode of MODES) {
  // `todo` goes on each test: node counts the failures inside a todo suite.
  describe(`SDK v2 server, ${mode.name}`, { timeout: 60_000 }, () => {
    const todo = mode.todo
    test("listMcpTools lists its tools with their schemas", { todo }, async () => {
      const server = await mode.start()
      try {
        const inventory = await listMcpTools({ v2: server.entry })
        assert.deepEqual(inventory.status, { v2: "connected" })
        assert.deepEqual(
          inventory.tools.v2?.map((t) => t.name),
          TOOLS,
        )
        const add = inventory.tools.v2?.find((t) => t.name === "add")
        assert.deepEqual(add?.inputSchema.required, ["a", "b"])
      } finally {
        await server.stop()
      }
    })

    test("calls give text, structured content and error results", { todo }, async () => {
      await withServer(mode, {}, async (source) => {
        assert.deepEqual(
          source.tools.map((t) => t.name),
          TOOLS.map((n) => `v2_${n}`),
        )
        assertOk(await tool(source, "echo").execute({ text: "hello v2" }), "hello v2")
        assertOk(await tool(source, "add").execute({ a: 2, b: 3.5 }), '{"sum":5.5}')
        const failed = await tool(source, "fail").execute({})
        assert.deepEqual([failed.isError, failed.output], [true, "it failed"])
      })
    })

    test("progress reaches onProgress and logs reach onLog", { todo }, async () => {
      const logs: unknown[][] = []
      await withServer(mode, { onLog: (...entry) => logs.push(entry) }, async (source) => {
        const progress = progressRecorder()
        assertOk(await tool(source, "progress").execute({}, { onProgress: progress.onProgress }), "progress done")
        assert.deepEqual(progress.seen, [
          { progress: 1, total: 2 },
          { progress: 2, total: 2 },
        ])
        assert.deepEqual(logs, [["v2", "warning", "halfway"]])
      })
    })

    describe("elicitation", () => {
      const answers: Array<[string, (req: Request) => Promise<Answer>, object]> = [
        [
          "accepted",
          async (req) => ({ id: req.id, ok: true, data: { name: "Ada" } }),
          { action: "accept", content: { ...ALL_DEFAULTS, name: "Ada" } },
        ],
        ["declined", async (req) => ({ id: req.id, ok: false, reason: "declined" }), { action: "decline" }],
        ["cancelled", async (req) => ({ id: req.id, ok: false, reason: "cancelled" }), { action: "cancel" }],
        ["thrown", async () => Promise.reject(new Error("no person here")), { action: "cancel" }],
      ]
      for (const [how, waitFor, expected] of answers) {
        test(how, { todo: todo ?? mode.elicitationTodo }, async () => {
          const seen: Request[] = []
          const recordingWaitFor = (req: Request) => (seen.push(req), waitFor(req))
          await withServer(mode, { waitFor: recordingWaitFor }, async (source) => {
            assert.deepEqual(elicited(await tool(source, "ask").execute({})), expected)
            assert.equal(seen.length, 1)
            assert.equal(seen[0]?.prompt, ELICIT_MESSAGE)
            assert.deepEqual(seen[0]?.data, { schema: DEFAULTS_SCHEMA })
          })
        })
      }
    })
  })
}
