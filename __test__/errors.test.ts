// Error codes: every rejection toolnexus makes carries a stable `code`, and every error
// result it composes says its code in `metadata.code`; a server's own error results carry
// none. Messages stay as they were (their tests are elsewhere); here each code is made
// to happen once, for real.
import assert from "node:assert/strict"
import { test } from "node:test"
import { createMcpStore, defineTool, listMcpTools, loadMcp, parseMcpConfig, providerSchema } from "toolnexus"
import { aiTools } from "toolnexus/ai"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"
import { exitAtOnce, fixture, local, NODE, poll, tempDir } from "./helpers.js"

const T = { timeout: 60_000 }

/** Asserts that `work` rejects (or throws) with `code`, and returns the error. */
async function rejects(work: () => unknown, code: string): Promise<Error & { code?: string }> {
  try {
    await work()
  } catch (error) {
    assert.ok(error instanceof Error, `an Error, got ${String(error)}`)
    assert.equal((error as { code?: string }).code, code, (error as Error).message)
    return error
  }
  assert.fail(`expected a rejection with ${code}`)
}

test(
  "calls: timeout, aborted, closed, server error, invalid argument; a server's own error has no code",
  T,
  async (t) => {
    const source = await loadMcp({ s: local() })
    t.after(() => source.close())
    const tool = (name: string) => source.tools.find((x) => x.name === `s_${name}`)!
    const slow = await tool("hang").execute({}, { timeout: 200 })
    assert.equal(slow.metadata?.code, "TOOLNEXUS_TIMEOUT", slow.output)
    const aborted = await tool("hang").execute({}, { signal: AbortSignal.abort() })
    assert.equal(aborted.metadata?.code, "TOOLNEXUS_ABORTED", aborted.output)
    const badContext = await tool("echo").execute({}, { timeout: "soon" as never })
    assert.equal(badContext.metadata?.code, "TOOLNEXUS_INVALID_ARGUMENT", badContext.output)
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const unsendable = await tool("echo").execute(cyclic)
    assert.equal(unsendable.metadata?.code, "TOOLNEXUS_INVALID_ARGUMENT", unsendable.output)
    const own = await tool("fail").execute({})
    assert.equal(own.isError, true)
    assert.equal(own.metadata?.code, undefined, "the server's own error result")
    await source.close()
    const closed = await tool("echo").execute({ text: "late" })
    assert.equal(closed.metadata?.code, "TOOLNEXUS_CLOSED", closed.output)
  },
)

test("a JSON-RPC error from the server, and a server that exits mid-call", T, async (t) => {
  const source = await loadMcp({ s: local(), r: { command: [NODE, fixture("rpc-error.mjs")] } })
  t.after(() => source.close())
  const refused = await source.tools.find((x) => x.name === "r_boom")!.execute({})
  assert.equal(refused.metadata?.code, "TOOLNEXUS_SERVER_ERROR", refused.output)
  const crash = await source.tools.find((x) => x.name === "s_crash")!.execute({})
  assert.equal(crash.metadata?.code, "TOOLNEXUS_SERVER_FAILED", crash.output)
})

test("the store: unknown tool, unknown server, a failed server", T, async (t) => {
  const store = createMcpStore({ ok: local(), broken: exitAtOnce() }, { catalogDir: tempDir(t) })
  t.after(() => store.close())
  await store.waitReady()
  assert.ok(await poll(() => store.status().broken?.state === "failed", 10_000))
  const unknown = await store.callTool("nope_nothing", {})
  assert.equal(unknown.metadata?.code, "TOOLNEXUS_UNKNOWN_TOOL", unknown.output)
  await rejects(() => store.listResources("nope"), "TOOLNEXUS_UNKNOWN_SERVER")
  await rejects(() => store.readResource("broken", "x://y"), "TOOLNEXUS_SERVER_FAILED")
  const meta = store.metaTools().find((x) => x.name === "call_tool")!
  const viaMeta = await meta.execute({ name: "nope", arguments: {} })
  assert.equal(viaMeta.metadata?.code, "TOOLNEXUS_UNKNOWN_TOOL", viaMeta.output)
})

test("loadMcp's sources: an unknown server", T, async (t) => {
  const source = await loadMcp({ s: local() })
  t.after(() => source.close())
  await rejects(() => source.readResource("nope", "x://y"), "TOOLNEXUS_UNKNOWN_SERVER")
  await rejects(() => source.subscribeResource("nope", "x://y", () => {}), "TOOLNEXUS_UNKNOWN_SERVER")
})

test("configs and arguments that cannot be used", async () => {
  await rejects(() => loadMcp("/nonexistent/mcp.json"), "TOOLNEXUS_INVALID_CONFIG")
  await rejects(() => listMcpTools(42 as never), "TOOLNEXUS_INVALID_CONFIG")
  await rejects(() => parseMcpConfig("[1]" as never), "TOOLNEXUS_INVALID_CONFIG")
  await rejects(() => createMcpStore({}, { state: "http://no" }), "TOOLNEXUS_INVALID_CONFIG")
  const store = createMcpStore({})
  try {
    await rejects(() => store.addServers("/nonexistent/mcp.json"), "TOOLNEXUS_INVALID_CONFIG")
    const typeError = await rejects(() => store.forAgent(""), "TOOLNEXUS_INVALID_ARGUMENT")
    assert.ok(typeError instanceof TypeError, "argument errors stay TypeErrors")
  } finally {
    await store.close()
  }
  await rejects(() => createMcpStore({}, { waitLocalMs: -1 }), "TOOLNEXUS_INVALID_ARGUMENT")
  await rejects(() => defineTool({ name: "", description: "", run: () => "" }), "TOOLNEXUS_INVALID_ARGUMENT")
  await rejects(() => providerSchema({ type: "object" }, "claude" as never), "TOOLNEXUS_INVALID_ARGUMENT")
  const plain = defineTool({ name: "plain", description: "", run: () => "" })
  await rejects(() => aiTools([plain], { maxOutputChars: "x" as never }), "TOOLNEXUS_INVALID_ARGUMENT")
})

test("a server that needs a sign-in nobody can give", T, async (t) => {
  const server = await startOAuthServer()
  t.after(() => server.close())
  const tokens = new Map<string, string>()
  const tokenStore = {
    get: async (key: string) => tokens.get(key),
    set: async (key: string, value: string) => void tokens.set(key, value),
    delete: async (key: string) => void tokens.delete(key),
  }
  const store = createMcpStore({ docs: { url: server.url } }, { oauth: { tokenStore }, catalog: false })
  t.after(() => store.close())
  await store.listToolsAsync()
  assert.equal(store.status().docs?.state, "needs_auth")
  const result = await store.callTool("docs_whoami", {})
  assert.equal(result.metadata?.code, "TOOLNEXUS_UNKNOWN_TOOL", "no tool is listed")
  await rejects(() => store.listPrompts("docs"), "TOOLNEXUS_SIGN_IN_REQUIRED")
})
