import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import fs from "node:fs"
import { describe, it, type TestContext } from "node:test"
import { promisify } from "node:util"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
// From their modules, not "toolnexus": these tests must run without the native addon.
import { defineTool } from "../js/define-tool.js"
import { buildMcpServer } from "../js/mcp-server.js"

const root = new URL("..", import.meta.url)
const pkgVersion: string = JSON.parse(fs.readFileSync(new URL("package.json", root), "utf8")).version

const echo = defineTool({
  name: "echo",
  description: "Echo text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], "x-extra": [1] },
  run: ({ text }) => String(text),
})
const fail = defineTool({ name: "fail", description: "Always fails", run: () => ({ output: "nope", isError: true }) })
const nothing = defineTool({ name: "nothing", description: "", run: () => undefined })

type Cfg = Parameters<typeof buildMcpServer>[1]
type OnCall = Parameters<typeof buildMcpServer>[2]

async function serve(t: TestContext, tools = [echo, fail, nothing], cfg?: Cfg, onCall?: OnCall) {
  const server = buildMcpServer(tools, cfg, onCall)
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: "test-client", version: "0.0.0" })
  await Promise.all([server.connect(serverSide), client.connect(clientSide)])
  t.after(async () => {
    await client.close()
    await server.close()
  })
  return { server, client }
}

describe("buildMcpServer", () => {
  it("lists name, description and inputSchema verbatim, in order", async (t) => {
    const s = await serve(t)
    const { tools } = await s.client.listTools()
    assert.deepEqual(
      tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
      [echo, fail, nothing].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    )
  })

  it("narrows tools/list and tools/call to cfg.tools", async (t) => {
    const s = await serve(t, [echo, fail, nothing], { tools: ["fail", "missing"] })
    const { tools } = await s.client.listTools()
    assert.deepEqual(
      tools.map((t) => t.name),
      ["fail"],
    )
    await assert.rejects(s.client.callTool({ name: "echo", arguments: { text: "x" } }), {
      code: ErrorCode.InvalidParams,
    })
  })

  it("advertises serverInfo toolnexus/<package version> and the tools capability by default", async (t) => {
    const s = await serve(t)
    assert.deepEqual(s.client.getServerVersion(), { name: "toolnexus", version: pkgVersion })
    assert.ok(s.client.getServerCapabilities()?.tools)
  })

  it("advertises cfg.name and cfg.version", async (t) => {
    const s = await serve(t, [echo], { name: "demo", version: "9.9.9" })
    assert.deepEqual(s.client.getServerVersion(), { name: "demo", version: "9.9.9" })
  })

  it("answers a call with one text content", async (t) => {
    const s = await serve(t)
    assert.deepEqual(await s.client.callTool({ name: "echo", arguments: { text: "hi" } }), {
      content: [{ type: "text", text: "hi" }],
      isError: false,
    })
    assert.deepEqual(await s.client.callTool({ name: "nothing" }), {
      content: [{ type: "text", text: "" }],
      isError: false,
    })
  })

  it("serves again the rich and structured content a result carries in its metadata", async (t) => {
    const content = [
      { type: "text", text: "a chart" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    ]
    const chart = {
      name: "chart",
      description: "",
      inputSchema: { type: "object" as const, properties: {} },
      source: "mcp",
      execute: async () => ({
        output: '{"points":3}',
        isError: false,
        metadata: { content, structuredContent: { points: 3 } },
      }),
    }
    const s = await serve(t, [chart])
    assert.deepEqual(await s.client.callTool({ name: "chart", arguments: {} }), {
      content,
      structuredContent: { points: 3 },
      isError: false,
    })
  })

  it("propagates isError", async (t) => {
    const s = await serve(t)
    assert.deepEqual(await s.client.callTool({ name: "fail", arguments: {} }), {
      content: [{ type: "text", text: "nope" }],
      isError: true,
    })
  })

  it("answers an unknown tool with an InvalidParams error", async (t) => {
    const s = await serve(t)
    await assert.rejects(s.client.callTool({ name: "missing", arguments: {} }), (err: unknown) => {
      assert.ok(err instanceof McpError)
      assert.equal(err.code, ErrorCode.InvalidParams)
      assert.match(err.message, /missing/)
      return true
    })
  })

  it("turns a rejecting execute into an error result", async (t) => {
    const bad = { ...echo, name: "bad", execute: async () => Promise.reject(new Error("exploded")) }
    const s = await serve(t, [bad])
    assert.deepEqual(await s.client.callTool({ name: "bad", arguments: {} }), {
      content: [{ type: "text", text: "exploded" }],
      isError: true,
    })
  })

  it("gives run an AbortSignal that fires when the client cancels", async (t) => {
    let signal: AbortSignal | undefined
    let started!: () => void
    const running = new Promise<void>((r) => (started = r))
    const wait = defineTool({
      name: "wait",
      description: "",
      run: (_args, ctx) =>
        new Promise((resolve) => {
          signal = ctx.signal
          started()
          ctx.signal?.addEventListener("abort", () => resolve("aborted"))
        }),
    })
    const s = await serve(t, [wait])
    const ac = new AbortController()
    const call = s.client.callTool({ name: "wait", arguments: {} }, undefined, { signal: ac.signal })
    await running
    assert.ok(signal instanceof AbortSignal)
    assert.equal(signal.aborted, false)
    ac.abort()
    await assert.rejects(call)
    // The cancellation notification reaches the server asynchronously.
    for (let i = 0; i < 100 && !signal.aborted; i++) await new Promise((r) => setTimeout(r, 10))
    assert.equal(signal.aborted, true)
  })

  it("reports each call to onCall", async (t) => {
    const events: { name: string; source: string; ms: number; isError: boolean }[] = []
    const s = await serve(t, undefined, undefined, (e) => {
      events.push(e)
    })
    await s.client.callTool({ name: "echo", arguments: { text: "a" } })
    await s.client.callTool({ name: "fail", arguments: {} })
    await assert.rejects(s.client.callTool({ name: "missing", arguments: {} }))
    assert.deepEqual(
      events.map(({ ms, ...rest }) => rest),
      [
        { name: "echo", source: "native", isError: false },
        { name: "fail", source: "native", isError: true },
      ],
    )
    for (const e of events) assert.ok(typeof e.ms === "number" && e.ms >= 0, `ms: ${e.ms}`)
  })

  it("swallows an onCall that throws or rejects", async (t) => {
    let calls = 0
    const s = await serve(t, undefined, undefined, () => {
      calls++
      if (calls === 1) throw new Error("observer broke")
      return Promise.reject(new Error("observer rejected"))
    })
    // An unhandled rejection would fail this test file under node:test.
    const expected = { content: [{ type: "text", text: "x" }], isError: false }
    assert.deepEqual(await s.client.callTool({ name: "echo", arguments: { text: "x" } }), expected)
    assert.deepEqual(await s.client.callTool({ name: "echo", arguments: { text: "x" } }), expected)
    await new Promise((r) => setImmediate(r))
    assert.equal(calls, 2)
  })

  it("refuses a second connect and a duplicate tool name", async (t) => {
    const s = await serve(t)
    await assert.rejects(s.server.connect(InMemoryTransport.createLinkedPair()[0]), /already/)
    assert.throws(() => buildMcpServer([echo, echo]), /duplicate/)
  })

  it("closes idempotently, also when never connected", async (t) => {
    const s = await serve(t)
    await s.server.close()
    await s.server.close()
    await assert.rejects(s.client.listTools())
    await buildMcpServer([echo]).close()
  })
})

// Importing toolnexus must never load the SDK. ESM keeps no public list of loaded
// modules, so a child process registers a resolve hook that throws for any specifier
// naming @modelcontextprotocol: a static SDK import anywhere below these modules then
// fails the import itself. The child also calls connect() and expects the hook's error,
// which proves the hook really was in force (otherwise this test could not fail).
const blockSdkHook = `export async function resolve(specifier, context, next) {
  if (specifier.includes("@modelcontextprotocol")) throw new Error("SDK load blocked: " + specifier)
  return next(specifier, context)
}`
const registerHook = `import { register } from "node:module"
register(${JSON.stringify("data:text/javascript," + encodeURIComponent(blockSdkHook))})`

async function importWithoutSdk(modules: string[], body: string) {
  const script =
    modules.map((m, i) => `import * as m${i} from ${JSON.stringify(new URL(m, root).href)}`).join("\n") + "\n" + body
  const args = [
    "--import",
    "data:text/javascript," + encodeURIComponent(registerHook),
    "--input-type=module",
    "-e",
    script,
  ]
  return promisify(execFile)(process.execPath, args, { cwd: root })
}

describe("lazy SDK loading", () => {
  it("importing js/define-tool.js and js/mcp-server.js does not load the SDK", async () => {
    const { stdout } = await importWithoutSdk(
      ["js/define-tool.js", "js/mcp-server.js"],
      `const server = m1.buildMcpServer([m0.defineTool({ name: "t", description: "", run: () => "" })])
       const err = await server.connect({}).then(() => null, (e) => e)
       if (!/SDK load blocked/.test(String(err?.message))) throw new Error("hook not in force: " + err)
       console.log("ok")`,
    )
    assert.equal(stdout.trim(), "ok")
  })

  it(
    "importing toolnexus does not load the SDK",
    { skip: !fs.existsSync(new URL("index.js", root)) && "no index.js yet" },
    async () => {
      const { stdout } = await importWithoutSdk(
        ["index.js"],
        `if (typeof m0.buildMcpServer !== "function") throw new Error("no buildMcpServer"); console.log("ok")`,
      )
      assert.equal(stdout.trim(), "ok")
    },
  )
})
