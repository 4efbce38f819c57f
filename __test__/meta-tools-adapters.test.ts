// The meta-tools in real agent loops, through each framework adapter as any tool: a
// stand-in for the provider's API on 127.0.0.1 answers with search_tools, describe_tool and
// call_tool uses, the adapters run them, and the server runs the call the model chose with
// the model's arguments. `modelTools` hands the meta-tools out when the listing is too big.
import assert from "node:assert/strict"
import { test, type TestContext } from "node:test"

import { createAnthropic } from "@ai-sdk/anthropic"
import Anthropic from "@anthropic-ai/sdk"
import { generateText, stepCountIs } from "ai"
import OpenAI from "openai"

import { aiTools } from "../js/adapters/ai.js"
import { anthropicTools, runAnthropicToolUses } from "../js/adapters/anthropic.js"
import { openaiTools, runOpenAIToolCalls } from "../js/adapters/openai.js"
import { chat, messages } from "./adapters/model-server.js"
import { setup } from "./adapters/setup.js"
import { anthropicProblems, openaiStrictProblems } from "./adapters/validators.js"

const META = ["search_tools", "describe_tool", "call_tool"]

/** The adapter set-up, and the meta-tools `modelTools` hands out for its listing. */
async function metaSetup(t: TestContext, replies: Array<(body: any) => unknown>) {
  const started = await setup(t, replies)
  // Any listing is "too big" at 0 characters: auto mode hands out the meta-tools.
  const tools = started.mcp.modelTools({ maxSchemaChars: 0 })
  assert.deepEqual(
    tools.map((tool) => tool.name),
    META,
  )
  return { ...started, tools }
}

test("AI SDK + Anthropic: a model finds, reads and calls a tool through the meta-tools", async (t) => {
  const { model, calls, tools } = await metaSetup(t, [
    messages.uses({ id: "u1", name: "search_tools", input: { query: "search the docs", limit: 3 } }),
    messages.uses({ id: "u2", name: "describe_tool", input: { name: "docs_search" } }),
    messages.uses({ id: "u3", name: "call_tool", input: { name: "docs_search", arguments: { query: "tides" } } }),
    messages.text("done"),
  ])
  const claude = createAnthropic({ baseURL: `${model.url}/v1`, apiKey: "test" })("claude-test")
  const result = await generateText({
    model: claude,
    tools: aiTools(tools, { model: claude }),
    prompt: "find the docs on tides",
    stopWhen: stepCountIs(5),
  })
  assert.equal(result.text, "done")
  const sent = model.requests[0].body.tools
  assert.deepEqual(
    sent.map((tool: any) => tool.name),
    META,
  )
  for (const tool of sent) assert.deepEqual(anthropicProblems(tool.input_schema), [], tool.name)
  const resultOf = (request: number) => JSON.stringify(model.requests[request].body.messages.at(-1).content)
  assert.match(resultOf(1), /docs_search.*Searches the docs/)
  assert.match(resultOf(2), /what to look for/, "describe_tool gives the parameters")
  assert.match(resultOf(3), /found for \{\\+"query\\+":\\+"tides\\+"\}/)
  assert.deepEqual(calls().find((c) => c.tool === "search")?.args, { query: "tides" })
})

test("openai SDK, Chat Completions: strict meta-tools carry a tool's arguments to the server", async (t) => {
  const { model, calls, tools } = await metaSetup(t, [
    chat.calls(
      { id: "c1", name: "search_tools", arguments: { query: "search the docs", limit: null } },
      { id: "c2", name: "call_tool", arguments: { name: "docs_search", arguments: { query: "q", limit: 2 } } },
      { id: "c3", name: "call_tool", arguments: { name: "docs_nope", arguments: {} } },
    ),
  ])
  const client = new OpenAI({ baseURL: `${model.url}/v1`, apiKey: "test" })
  const offered = openaiTools(tools, { api: "chat" })
  const first = await client.chat.completions.create({
    model: "gpt-test",
    messages: [{ role: "user", content: "go" }],
    tools: offered,
  })
  const sent = Object.fromEntries(model.requests[0].body.tools.map((tool: any) => [tool.function.name, tool.function]))
  for (const name of ["search_tools", "describe_tool"]) {
    assert.equal(sent[name].strict, true, name)
    assert.deepEqual(openaiStrictProblems(sent[name].parameters), [], name)
  }
  // Strict mode could only close `arguments` to `{}`: call_tool is sent without it.
  assert.equal(sent.call_tool.strict, false)
  assert.notEqual(sent.call_tool.parameters.properties.arguments.additionalProperties, false)
  const [found, called, unknown] = await runOpenAIToolCalls(tools, first.choices[0].message.tool_calls ?? [])
  assert.match(String(found.content), /"name":"docs_search"/)
  assert.equal(called.content, 'found for {"query":"q","limit":2}')
  assert.match(String(unknown.content), /^Error: no tool named "docs_nope"; search_tools finds the names/)
  assert.deepEqual(calls().find((c) => c.tool === "search")?.args, { query: "q", limit: 2 })
})

test("@anthropic-ai/sdk: tool_result blocks of the meta-tools", async (t) => {
  const { model, calls, tools } = await metaSetup(t, [
    messages.uses(
      { id: "u1", name: "search_tools", input: { query: "always fails" } },
      { id: "u2", name: "call_tool", input: { name: "docs_broken" } },
      { id: "u3", name: "call_tool", input: { name: "docs_search", arguments: { query: "z" } } },
    ),
  ])
  const client = new Anthropic({ baseURL: model.url, apiKey: "test" })
  const first = await client.messages.create({
    model: "claude-test",
    max_tokens: 100,
    messages: [{ role: "user", content: "go" }],
    tools: anthropicTools(tools),
  })
  const [found, broken, search] = await runAnthropicToolUses(tools, first.content)
  assert.equal(found.tool_use_id, "u1")
  assert.match(JSON.stringify(found.content), /docs_broken/)
  assert.equal(broken.is_error, true)
  assert.match(JSON.stringify(broken.content), /the index is offline/)
  assert.deepEqual(search.content, [{ type: "text", text: 'found for {"query":"z"}' }])
  assert.deepEqual(calls().find((c) => c.tool === "search")?.args, { query: "z" })
})
