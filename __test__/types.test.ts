// The declared types against the runtime. `npm run typecheck` compiles this file: every
// value declared valid must compile and every `@ts-expect-error` line must fail to. The
// test then hands the same values to the runtime and checks that it accepts, refuses and
// returns what the types say.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { test } from "node:test"
import {
  buildMcpServer,
  createMcpStore,
  defineTool,
  elicitationToRequest,
  type Answer,
  type Request,
  type ServerConfig,
  type StoreServerStatus,
  type StoreToolInfo,
} from "toolnexus"
import { startStreamable } from "./fixtures/remote-streamable.mjs"
import { fixture, NODE, poll, tempDir, toolsFlag } from "./helpers.js"

const T = { timeout: 60_000 }

const server = fixture("server.mjs")
const tools = toolsFlag([
  { name: "t", inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
])

/** Identity, typed: an argument that is not a `ServerConfig` fails to compile. */
const entry = (e: ServerConfig) => e

/** Every key each type declares. `satisfies` fails to compile when one is missing or extra. */
const REQUEST_KEYS = { id: 1, kind: 1, prompt: 1, url: 1, data: 1, expiresAt: 1 } satisfies Record<keyof Request, 1>
const STATUS_KEYS = {
  state: 1,
  lastError: 1,
  toolCount: 1,
  connectedAt: 1,
  restarts: 1,
  clientId: 1,
  protocolVersion: 1,
} satisfies Record<keyof StoreServerStatus, 1>
const INFO_KEYS = {
  name: 1,
  description: 1,
  inputSchema: 1,
  serviceName: 1,
  clientId: 1,
  // The members a server may list beyond the first three (McpToolMembers).
  title: 1,
  annotations: 1,
  outputSchema: 1,
  icons: 1,
  execution: 1,
  _meta: 1,
} satisfies Record<keyof StoreToolInfo, 1>

const assertDeclared = (value: object, declared: object, what: string) =>
  assert.deepEqual(
    Object.keys(value).filter((key) => !(key in declared)),
    [],
    `${what} has undeclared keys`,
  )

test("every server entry the types accept connects, and every one they refuse fails", T, async (t) => {
  const srv = await startStreamable()
  t.after(() => srv.close())
  const url = srv.url
  // A program that takes no arguments, for the Claude-desktop form without `args`.
  const bareServer = path.join(tempDir(t), "server")
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`
  fs.writeFileSync(bareServer, `#!/bin/sh\nexec ${[NODE, server, tools].map(quote).join(" ")}\n`, { mode: 0o755 })
  const accepted = {
    array: entry({ command: [NODE, server, tools] }),
    args: entry({ command: NODE, args: [server, tools] }),
    program: entry({ command: bareServer }),
    local: entry({ type: "local", command: [NODE, server, tools] }),
    stdio: entry({ type: "stdio", command: NODE, args: [server, tools] }),
    url: entry({ url }),
    remote: entry({ type: "remote", url }),
    http: entry({ type: "http", url }),
    streamable: entry({ type: "streamable-http", url }),
    camel: entry({ type: "streamableHttp", url }),
    sse: entry({ type: "sse", url, headers: { "x-test": "1" } }),
  }
  const refused = {
    // @ts-expect-error arguments go in `command` or in `args`, not in both
    both: entry({ command: [NODE, server], args: [tools] }),
    // @ts-expect-error no such transport
    websocket: entry({ type: "websocket", url: "ws://127.0.0.1:9/mcp" }),
    // @ts-expect-error a local entry has no url
    mixed: entry({ type: "stdio", url }),
  }
  const store = createMcpStore()
  t.after(() => store.close())
  // updateServer(name, entry) takes a ServerConfig: the form the issue found refused.
  const entries = Object.entries({ ...accepted, ...refused })
  for (const [name, e] of entries) store.updateServer(name, e)
  const settled = await poll(() => {
    const states = Object.values(store.status()).map((s) => s.state)
    return !states.includes("initializing") && states.length === entries.length
  }, 30_000)
  assert.ok(settled, JSON.stringify(store.status()))
  const status = store.status()
  for (const name of Object.keys(accepted))
    assert.equal(status[name]?.state, "connected", `${name}: ${JSON.stringify(status[name])}`)
  for (const name of Object.keys(refused))
    assert.equal(status[name]?.state, "failed", `${name}: ${JSON.stringify(status[name])}`)
  for (const s of Object.values(status)) assertDeclared(s, STATUS_KEYS, "a status entry")
})

test("a store's schemas are frozen all the way down, as their types say", T, async (t) => {
  const store = createMcpStore({ s: { command: [NODE, server, tools] } })
  t.after(() => store.close())
  const [info] = await store.listToolsAsync()
  assert.ok(info)
  assertDeclared(info, INFO_KEYS, "a StoreToolInfo")
  const [handle] = store.tools()
  assert.ok(handle)
  for (const schema of [info.inputSchema, handle.inputSchema]) {
    assert.throws(() => {
      // @ts-expect-error frozen: required is a readonly array
      schema.required!.push("x")
    }, TypeError)
    assert.throws(() => {
      // @ts-expect-error frozen all the way down
      schema.properties!.q = {}
    }, TypeError)
    assert.throws(() => {
      // @ts-expect-error frozen at the top
      schema.type = "array"
    }, TypeError)
  }
  // Store tools are tools: an MCP server serves them like any other.
  await buildMcpServer(store.tools()).close()
})

test("ToolContext.answer reaches a defined tool's run; Request has only declared keys and no expiresAt", async () => {
  const answer: Answer = { id: "r1", ok: true, data: { name: "Ada" } }
  const echo = defineTool({ name: "echo_answer", description: "", run: (_args, ctx) => ctx.answer })
  const res = await echo.execute({}, { answer })
  assert.equal(res.isError, false, res.output)
  assert.deepEqual(JSON.parse(res.output), answer)

  const form = elicitationToRequest({ message: "Name?", requestedSchema: { type: "object", properties: {} } })
  const link = elicitationToRequest({
    mode: "url",
    message: "Sign in",
    url: "https://example.com/auth",
    elicitationId: "e1",
  })
  for (const request of [form, link]) {
    assertDeclared(request, REQUEST_KEYS, "a Request")
    assert.equal(request.expiresAt, undefined, "documented as never set")
  }
  assert.equal(form.kind, "input")
  assert.equal(link.kind, "authorization")
})
