// The adapters' `defer` option: tools marked for the provider's own tool search
// (`defer_loading: true`) and that provider's search tool added, as each provider documents
// them; nothing changes without the option. The round trips send them through each
// framework's own package to a stand-in for its provider's API on 127.0.0.1, which answers
// with a call of a deferred tool that then runs on the MCP server.
import assert from "node:assert/strict"
import { after, test } from "node:test"

import { createAnthropic } from "@ai-sdk/anthropic"
import Anthropic from "@anthropic-ai/sdk"
import { generateText, stepCountIs } from "ai"
import OpenAI from "openai"

import { createMcpStore, loadMcp, providerSchema, type StoreTool, type Tool } from "../index.js"
import { aiTools } from "../js/adapters/ai.js"
import { anthropicTools, runAnthropicToolUses } from "../js/adapters/anthropic.js"
import { openaiTools, runOpenAIToolCalls } from "../js/adapters/openai.js"
import { messages, responses } from "./adapters/model-server.js"
import { setup } from "./adapters/setup.js"
import { NODE, fixture } from "./helpers.js"
// As in adapters.test.ts: @ai-sdk/openai's declarations need zod 4's types.
const { createOpenAI } = await import(String("@ai-sdk/openai"))

const mcp = await loadMcp({ docs: { command: [NODE, fixture("adapter-tools.mjs")] } })
after(() => mcp.close())

const REGEX = { type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" }
const BM25 = { type: "tool_search_tool_bm25_20251119", name: "tool_search_tool_bm25" }
const TOOL_SEARCH = { type: "tool_search" }
const AI_DEFERRED = { anthropic: { deferLoading: true }, openai: { deferLoading: true } }

/** Every tool but docs_search: a deferral by function that leaves one tool loaded. */
const allButSearch = (tool: Tool) => tool.name !== "docs_search"

const invalid = (fn: () => unknown) =>
  assert.throws(fn, (error: any) => error?.code === "TOOLNEXUS_INVALID_ARGUMENT" && error instanceof TypeError)

test("anthropicTools: defer true marks every tool and adds the regex tool search tool", () => {
  const tools = anthropicTools(mcp.tools, { defer: true })
  assert.deepEqual(tools[0], {
    name: "docs_search",
    description: "Searches the docs",
    input_schema: providerSchema(mcp.tools[0], "anthropic"),
    defer_loading: true,
  })
  assert.deepEqual(tools, [
    ...mcp.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: providerSchema(tool, "anthropic"),
      defer_loading: true,
    })),
    REGEX,
  ])
  assert.deepEqual(anthropicTools(mcp.tools, { defer: true, search: "bm25" }).at(-1), BM25)
})

test("anthropicTools: a function defers the tools it picks; none picked adds no search tool", () => {
  const plain = anthropicTools(mcp.tools)
  const seen: string[] = []
  const tools = anthropicTools(mcp.tools, {
    defer: (tool) => (seen.push(tool.name), allButSearch(tool)),
    search: "bm25",
  })
  assert.deepEqual(
    seen,
    mcp.tools.map((tool) => tool.name),
  )
  assert.deepEqual(tools, [plain[0], ...plain.slice(1).map((tool) => ({ ...tool, defer_loading: true })), BM25])
  assert.deepEqual(anthropicTools(mcp.tools, { defer: () => false }), plain)
})

test("anthropicTools: without defer the output is what it was", () => {
  // Byte for byte (key order too) what the adapter made before `defer`.
  const plain = anthropicTools(mcp.tools)
  const before = mcp.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: providerSchema(tool, "anthropic"),
  }))
  assert.equal(JSON.stringify(plain), JSON.stringify(before))
  for (const opts of [{}, { defer: false }, { search: "bm25" as const }]) {
    assert.equal(JSON.stringify(anthropicTools(mcp.tools, opts)), JSON.stringify(plain), JSON.stringify(opts))
  }
  invalid(() => anthropicTools(mcp.tools, { defer: true, search: "fuzzy" as never }))
  invalid(() => anthropicTools(mcp.tools, { defer: "yes" as never }))
})

test("openaiTools (Responses): defer marks function tools and adds the tool_search tool", () => {
  const tools = openaiTools(mcp.tools, { defer: true })
  assert.deepEqual(tools[0], {
    type: "function",
    name: "docs_search",
    description: "Searches the docs",
    parameters: providerSchema(mcp.tools[0], "openai-strict"),
    strict: true,
    defer_loading: true,
  })
  assert.deepEqual(tools.at(-1), TOOL_SEARCH)
  assert.equal(tools.length, mcp.tools.length + 1)
  assert.ok(tools.slice(0, -1).every((tool) => "defer_loading" in tool && tool.defer_loading === true))

  const plain = openaiTools(mcp.tools, { strict: false })
  const picked = openaiTools(mcp.tools, { api: "responses", strict: false, defer: allButSearch })
  assert.deepEqual(picked, [plain[0], ...plain.slice(1).map((tool) => ({ ...tool, defer_loading: true })), TOOL_SEARCH])
  assert.deepEqual(openaiTools(mcp.tools, { defer: () => false }), openaiTools(mcp.tools))
})

test("openaiTools: without defer the output is what it was; Chat Completions refuses defer", () => {
  // Byte for byte (key order too) what the adapter made before `defer`.
  const fn = (tool: Tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: providerSchema(tool, "openai-strict"),
    strict: true,
  })
  const responsesTools = openaiTools(mcp.tools)
  assert.equal(
    JSON.stringify(responsesTools),
    JSON.stringify(mcp.tools.map((tool) => ({ type: "function", ...fn(tool) }))),
  )
  assert.equal(JSON.stringify(openaiTools(mcp.tools, { defer: false })), JSON.stringify(responsesTools))
  const chatTools = openaiTools(mcp.tools, { api: "chat" })
  assert.equal(
    JSON.stringify(chatTools),
    JSON.stringify(mcp.tools.map((tool) => ({ type: "function", function: fn(tool) }))),
  )
  assert.equal(JSON.stringify(openaiTools(mcp.tools, { api: "chat", defer: false })), JSON.stringify(chatTools))
  // OpenAI documents tool search for the Responses API only.
  // @ts-expect-error: the types refuse it too
  invalid(() => openaiTools(mcp.tools, { api: "chat", defer: true }))
  invalid(() => openaiTools(mcp.tools, { defer: 1 as never }))
})

test("aiTools: defer sets the AI SDK providers' deferLoading; without it nothing changes", () => {
  const plain = aiTools(mcp.tools)
  const picked = aiTools(mcp.tools, { defer: allButSearch })
  for (const tool of mcp.tools) {
    const expected = allButSearch(tool) ? AI_DEFERRED : undefined
    assert.deepEqual(picked[tool.name].providerOptions, expected, tool.name)
    assert.equal("deferLoading" in picked[tool.name], false, "not the AI SDK's own client-side search")
    assert.deepEqual(Object.keys(plain[tool.name]), ["description", "inputSchema", "execute", "toModelOutput"])
  }
  assert.ok(Object.values(aiTools(mcp.tools, { defer: true })).every((tool) => tool.providerOptions !== undefined))
  assert.deepEqual(
    Object.values(aiTools(mcp.tools, { defer: false })).map((tool) => Object.keys(tool)),
    Object.values(plain).map((tool) => Object.keys(tool)),
  )
  invalid(() => aiTools(mcp.tools, { defer: {} as never }))
})

test("@anthropic-ai/sdk: the request carries defer_loading and the tool search tool; the found tool runs", async (t) => {
  const { mcp, model } = await setup(t, [messages.uses({ id: "u1", name: "docs_big", input: { n: 3 } })])
  const client = new Anthropic({ baseURL: model.url, apiKey: "test" })
  const tools = anthropicTools(mcp.tools, { defer: allButSearch })
  const reply = await client.messages.create({
    model: "claude-test",
    max_tokens: 100,
    messages: [{ role: "user", content: "go" }],
    tools,
  })
  const sent = model.requests[0].body.tools
  assert.deepEqual(sent[0], {
    name: "docs_search",
    description: "Searches the docs",
    input_schema: providerSchema(mcp.tools[0], "anthropic"),
  })
  assert.deepEqual(sent[3], {
    name: "docs_big",
    description: mcp.tools[3].description,
    input_schema: providerSchema(mcp.tools[3], "anthropic"),
    defer_loading: true,
  })
  assert.deepEqual(sent.at(-1), REGEX)
  assert.equal(sent.length, mcp.tools.length + 1)
  // The server ran the deferred tool with the model's arguments: n = 3 characters.
  const [big] = await runAnthropicToolUses(mcp.tools, reply.content)
  assert.deepEqual(big, { type: "tool_result", tool_use_id: "u1", content: [{ type: "text", text: "xxx" }] })
})

test("openai SDK, Responses: the request carries defer_loading and the tool_search tool; the found tool runs", async (t) => {
  const { mcp, model, calls } = await setup(t, [
    responses.calls({ id: "c1", name: "docs_search", arguments: { query: "tides", limit: null, filter: null } }),
  ])
  const client = new OpenAI({ baseURL: `${model.url}/v1`, apiKey: "test" })
  const response = await client.responses.create({
    model: "gpt-test",
    input: "go",
    tools: openaiTools(mcp.tools, { defer: true }),
  })
  const sent = model.requests[0].body.tools
  assert.deepEqual(sent[0], {
    type: "function",
    name: "docs_search",
    description: "Searches the docs",
    parameters: providerSchema(mcp.tools[0], "openai-strict"),
    strict: true,
    defer_loading: true,
  })
  assert.deepEqual(sent.at(-1), TOOL_SEARCH)
  assert.equal(sent.filter((tool: any) => tool.defer_loading === true).length, mcp.tools.length)
  const [found] = await runOpenAIToolCalls(mcp.tools, response.output)
  assert.deepEqual(found, { type: "function_call_output", call_id: "c1", output: 'found for {"query":"tides"}' })
  assert.deepEqual(calls().find((c) => c.tool === "search")?.args, { query: "tides" })
})

test("AI SDK + Anthropic: deferred tools reach the API with defer_loading next to the tool search tool", async (t) => {
  const { mcp, model, calls } = await setup(t, [
    messages.uses({ id: "u1", name: "docs_search", input: { query: "tides" } }),
    messages.text("done"),
  ])
  const anthropic = createAnthropic({ baseURL: `${model.url}/v1`, apiKey: "test" })
  const claude = anthropic("claude-test")
  const result = await generateText({
    model: claude,
    tools: {
      ...aiTools(mcp.tools, { model: claude, defer: true }),
      toolSearch: anthropic.tools.toolSearchRegex_20251119(),
    },
    prompt: "find the docs on tides",
    stopWhen: stepCountIs(3),
  })
  assert.equal(result.text, "done")
  const sent = model.requests[0].body.tools
  const functions = sent.filter((tool: any) => tool.type === undefined)
  assert.deepEqual(
    functions.map((tool: any) => [tool.name, tool.defer_loading]),
    mcp.tools.map((tool) => [tool.name, true]),
  )
  assert.deepEqual(functions[0].input_schema, providerSchema(mcp.tools[0], "anthropic"))
  assert.deepEqual(
    sent.filter((tool: any) => tool.type !== undefined),
    [REGEX],
  )
  assert.deepEqual(calls().find((c) => c.tool === "search")?.args, { query: "tides" })
})

test("AI SDK + OpenAI Responses: deferred tools reach the API with defer_loading next to tool_search", async (t) => {
  const { mcp, model, calls } = await setup(t, [
    responses.calls({ id: "c1", name: "docs_search", arguments: { query: "tides" } }),
    responses.text("done"),
  ])
  const openai = createOpenAI({ baseURL: `${model.url}/v1`, apiKey: "test" })
  const gpt = openai("gpt-test")
  const result = await generateText({
    model: gpt,
    tools: { ...aiTools(mcp.tools, { model: gpt, defer: allButSearch }), toolSearch: openai.tools.toolSearch() },
    prompt: "find the docs on tides",
    stopWhen: stepCountIs(3),
  })
  assert.equal(result.text, "done")
  const sent = model.requests[0].body.tools
  const functions = sent.filter((tool: any) => tool.type === "function")
  assert.deepEqual(
    functions.map((tool: any) => [tool.name, tool.defer_loading]),
    mcp.tools.map((tool) => [tool.name, allButSearch(tool) ? true : undefined]),
  )
  assert.deepEqual(
    sent.filter((tool: any) => tool.type !== "function"),
    [TOOL_SEARCH],
  )
  assert.deepEqual(calls().find((c) => c.tool === "search")?.args, { query: "tides" })
})

test("an entry's deferLoading defers its tools by default, less alwaysLoad, in loadMcp and a store; maxOutputChars reaches both", async () => {
  const entry = {
    command: [NODE, fixture("adapter-tools.mjs")],
    deferLoading: true,
    alwaysLoad: ["search"],
    maxOutputChars: 50,
  }
  const source = await loadMcp({ docs: entry })
  const store = createMcpStore({ docs: entry }, { catalog: false })
  try {
    await store.listToolsAsync()
    const lists: Array<Array<Tool | StoreTool>> = [source.tools, store.tools()]
    for (const tools of lists) {
      const made = anthropicTools(tools)
      const expected = tools.filter((tool) => tool.name !== "docs_search").map((tool) => tool.name)
      assert.ok(expected.length > 0)
      assert.deepEqual(
        made.filter((tool) => "defer_loading" in tool).map((tool) => (tool as { name: string }).name),
        expected,
      )
      assert.deepEqual(made.at(-1), REGEX)
      const undeferred = made.slice(0, -1).map((tool) => {
        const { defer_loading, ...rest } = tool as { defer_loading?: true }
        return rest
      })
      assert.deepEqual(anthropicTools(tools, { defer: false }), undeferred, "defer: false overrides the entry")
      assert.ok(!JSON.stringify(openaiTools(tools, { api: "chat" })).includes("defer_loading"), "Chat defers nothing")
      const search = tools.find((tool) => tool.name === "docs_search")!
      assert.equal(search.metadata?.deferLoading, undefined)
      assert.equal(search.metadata?.maxOutputChars, 50)
      assert.equal(tools.find((tool) => tool !== search)?.metadata?.deferLoading, true)
    }
  } finally {
    await Promise.all([source.close(), store.close()])
  }
})
