// MCP Apps' visibility rule against a server written with the official SDK v2: a tool
// whose `_meta.ui.visibility` does not name "model" is in no list meant for a model
// (`tools`, `searchTools`, `metaTools`, `modelTools`, a store view's `listTools` and
// `tools`), reaches the host through `appTools` with `visibility: ["app"]` and runs from
// there, is refused by the meta-tools naming the rule, and `listMcpTools` shows it.
import assert from "node:assert/strict"
import { test, type TestContext } from "node:test"
import { createMcpStore, listMcpTools, loadMcp, type Tool } from "toolnexus"
import { aiTools } from "toolnexus/ai"
import { anthropicTools, runAnthropicToolUses } from "toolnexus/anthropic"
import { openaiTools, runOpenAIToolCalls } from "toolnexus/openai"
import { fixture, NODE } from "./helpers.js"

const config = { apps: { command: [NODE, fixture("apps-visibility.mjs")], protocol: "2026-07-28" as const } }
const names = (tools: Array<{ name: string }>) => tools.map((tool) => tool.name).sort()
const MODEL = ["apps_plain", "apps_weather"]

/** What the meta-tool `call_tool` answers for `name`, and what `describe_tool` does. */
async function throughMetaTools(meta: Tool[], name: string) {
  const byName = (n: string) => meta.find((tool) => tool.name === n)!
  const called = await byName("call_tool").execute({ name, arguments: {} })
  const described = await byName("describe_tool").execute({ name })
  return { called, described }
}

function assertRefused(result: { isError: boolean; output: string; metadata?: { code?: string } }) {
  assert.equal(result.isError, true)
  assert.equal(result.metadata?.code, "TOOLNEXUS_APP_ONLY_TOOL")
  assert.match(result.output, /"apps_refresh_view" is for an app's view only .*visibility/)
}

test("loadMcp: an app-only tool is only in appTools, runs from there, and is refused to a model", async (t: TestContext) => {
  const source = await loadMcp(config)
  t.after(() => source.close())
  assert.deepEqual(names(source.tools), MODEL)
  assert.deepEqual(names(source.modelTools({ mode: "all" })), MODEL)
  assert.deepEqual(
    source.appTools.map((tool) => [tool.name, tool.visibility]),
    [["apps_refresh_view", ["app"]]],
  )
  assert.ok(!Object.keys(source).includes("appTools"), "not one of the source's own keys")
  assert.equal(source.tools.find((tool) => tool.name === "apps_weather")?.visibility, undefined)
  assert.deepEqual(names(source.searchTools("refresh")), ["apps_weather"], "search finds no app-only tool")
  const { called, described } = await throughMetaTools(source.metaTools(), "apps_refresh_view")
  assertRefused(called)
  assertRefused(described)
  const ran = await source.appTools[0]!.execute({})
  assert.equal(ran.output, "refreshed")
})

test("a store view: listTools, tools and search leave app-only tools out; appTools and callTool have them", async (t: TestContext) => {
  const store = createMcpStore(config, { catalog: false })
  t.after(() => store.close())
  await store.listToolsAsync()
  assert.deepEqual(names(store.listTools()), MODEL)
  assert.deepEqual(names(store.tools()), MODEL)
  assert.deepEqual(names(store.searchTools("refresh")), ["apps_weather"])
  const apps = store.appTools()
  assert.deepEqual(
    apps.map((tool) => [tool.name, tool.visibility]),
    [["apps_refresh_view", ["app"]]],
  )
  assert.equal((await apps[0]!.execute({})).output, "refreshed")
  assert.equal((await store.callTool("apps_refresh_view", {})).output, "refreshed", "the host's own call runs it")
  const { called, described } = await throughMetaTools(store.metaTools(), "apps_refresh_view")
  assertRefused(called)
  assertRefused(described)
})

test("the adapters hand a model no app-only tool, even when given one, and refuse to run one for it", async (t: TestContext) => {
  const source = await loadMcp(config)
  t.after(() => source.close())
  const all = [...source.tools, ...source.appTools]
  assert.deepEqual(names(anthropicTools(all)), MODEL)
  assert.deepEqual(names(openaiTools(all, { api: "responses" }) as Array<{ name: string }>), MODEL)
  assert.deepEqual(Object.keys(aiTools(all)).sort(), MODEL)
  const [use] = await runAnthropicToolUses(all, [{ type: "tool_use", id: "u1", name: "apps_refresh_view", input: {} }])
  assert.equal(use!.is_error, true)
  assert.match(JSON.stringify(use!.content), /for an app's view only/)
  const [call] = await runOpenAIToolCalls(all, [
    { type: "function_call", call_id: "c1", name: "apps_refresh_view", arguments: "{}" },
  ])
  assert.match(String((call as { output: unknown }).output), /for an app's view only/)
})

test("listMcpTools shows every tool, an app-only one with its visibility", async () => {
  const { tools } = await listMcpTools(config)
  assert.deepEqual(
    tools.apps!.map((tool) => [tool.name, tool.visibility]),
    [
      ["weather", undefined],
      ["refresh_view", ["app"]],
      ["plain", undefined],
    ],
  )
})
