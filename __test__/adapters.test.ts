// The adapters in real agent loops: each framework's own package talks to a stand-in for
// its provider's API on 127.0.0.1, which answers with calls of MCP tools of a real server
// (the official SDK's McpServer); the tests check what each SDK sent the model, that the
// server ran the calls with the model's arguments, and what the model read back.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { test } from "node:test"

import { createAnthropic } from "@ai-sdk/anthropic"
import Anthropic from "@anthropic-ai/sdk"
import { generateText, stepCountIs } from "ai"
import OpenAI from "openai"

import { loadMcp, providerSchema } from "../index.js"
import { aiTools } from "../js/adapters/ai.js"
import { anthropicTools, runAnthropicToolUses } from "../js/adapters/anthropic.js"
import { openaiTools, runOpenAIToolCalls } from "../js/adapters/openai.js"
import { chat, messages, responses } from "./adapters/model-server.js"
import { setup } from "./adapters/setup.js"
import { anthropicProblems, openaiStrictProblems } from "./adapters/validators.js"
// @ai-sdk/openai's declarations need zod 4's types, and this package's devDependency is
// zod 3 (the fixture servers use it): loaded untyped.
const { createOpenAI } = await import(String("@ai-sdk/openai"))

import { NODE, ROOT, fixture, poll } from "./helpers.js"

const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

test("AI SDK + OpenAI Responses: strict schemas, forced nulls taken out, images as file parts", async (t) => {
  const { mcp, model, calls } = await setup(t, [
    responses.calls(
      { id: "c1", name: "docs_search", arguments: { query: "mcp", limit: null, filter: { lang: null, tags: ["a"] } } },
      { id: "c2", name: "docs_picture", arguments: {} },
    ),
    responses.text("done"),
  ])
  const openai = createOpenAI({ baseURL: `${model.url}/v1`, apiKey: "test" })
  const result = await generateText({
    model: openai("gpt-test"),
    tools: aiTools(mcp.tools, { profile: "openai-strict" }),
    prompt: "find mcp",
    stopWhen: stepCountIs(3),
  })
  assert.equal(result.text, "done")
  const sent = model.requests[0].body.tools
  assert.deepEqual(
    sent.map((tool: any) => [tool.name, tool.strict]),
    mcp.tools.map((tool) => [tool.name, true]),
  )
  for (const tool of sent) assert.deepEqual(openaiStrictProblems(tool.parameters), [], tool.name)
  assert.deepEqual(sent[0].parameters, providerSchema(mcp.tools[0], "openai-strict"))
  assert.deepEqual(calls().find((c) => c.tool === "search").args, { query: "mcp", filter: { tags: ["a"] } })
  const back = model.requests[1].body.input.filter((item: any) => item.type === "function_call_output")
  assert.equal(back[0].output, 'found for {"query":"mcp","filter":{"tags":["a"]}}')
  const parts = back[1].output
  assert.deepEqual(parts[0], { type: "input_text", text: "a picture" })
  assert.ok(
    parts.some((p: any) => p.type === "input_image" && String(p.image_url).includes(PIXEL)),
    JSON.stringify(parts),
  )
  assert.ok(
    parts.some(
      (p: any) => p.type === "input_text" && p.text.includes("[resource link: file:///docs/a.md (text/markdown)"),
    ),
  )
  assert.ok(
    parts.some(
      (p: any) => p.type === "input_text" && p.text === "[resource file:///docs/b.txt (text/plain)]\ninline b",
    ),
  )
})

test("AI SDK + Anthropic: image blocks, is_error, truncation", async (t) => {
  const { mcp, model } = await setup(t, [
    messages.uses(
      { id: "u1", name: "docs_picture", input: {} },
      { id: "u2", name: "docs_broken", input: {} },
      { id: "u3", name: "docs_big", input: { n: 5000 } },
    ),
    messages.text("done"),
  ])
  const anthropic = createAnthropic({ baseURL: `${model.url}/v1`, apiKey: "test" })
  const claude = anthropic("claude-test")
  const result = await generateText({
    model: claude,
    tools: aiTools(mcp.tools, { model: claude, maxOutputChars: 1000 }),
    prompt: "look",
    stopWhen: stepCountIs(3),
  })
  assert.equal(result.text, "done")
  for (const tool of model.requests[0].body.tools) assert.deepEqual(anthropicProblems(tool.input_schema), [], tool.name)
  const results = model.requests[1].body.messages.at(-1).content
  const [picture, broken, big] = results
  assert.equal(picture.type, "tool_result")
  assert.ok(
    picture.content.some(
      (b: any) => b.type === "image" && b.source.data === PIXEL && b.source.media_type === "image/png",
    ),
    JSON.stringify(picture.content),
  )
  assert.equal(broken.is_error, true)
  assert.match(JSON.stringify(broken.content), /the index is offline/)
  const bigText = JSON.stringify(big.content)
  assert.match(bigText, /\[toolnexus: output cut: 4000 of 5000 characters not shown\]/)
  assert.ok(!bigText.includes("x".repeat(1001)))
})

test("AI SDK: its abort signal cancels the tool call on the server", async (t) => {
  const { mcp, model, calls } = await setup(t, [responses.calls({ id: "h", name: "docs_hang", arguments: {} })])
  const openai = createOpenAI({ baseURL: `${model.url}/v1`, apiKey: "test" })
  const controller = new AbortController()
  const run = generateText({
    model: openai("gpt-test"),
    tools: aiTools(mcp.tools),
    prompt: "wait",
    abortSignal: controller.signal,
    stopWhen: stepCountIs(3),
  })
  assert.ok(await poll(() => calls().some((c) => c.event === "started"), 10_000), "the call reached the server")
  controller.abort()
  // The call ends as an aborted result, and the loop stops before asking the model again.
  await assert.rejects(run, (error: any) => error?.name === "AbortError" || /abort/i.test(String(error?.message)))
  assert.equal(model.requests.length, 1)
  assert.ok(await poll(() => calls().some((c) => c.event === "cancelled"), 5_000), "the server was told")
})

test("openai SDK, Chat Completions: tools, calls run, tool messages back, errors as text", async (t) => {
  const { mcp, model, calls } = await setup(t, [
    chat.calls(
      { id: "c1", name: "docs_search", arguments: { query: "q", limit: 2, filter: null } },
      { id: "c2", name: "docs_broken", arguments: {} },
      { id: "c3", name: "docs_nope", arguments: {} },
    ),
    chat.text("done"),
  ])
  const client = new OpenAI({ baseURL: `${model.url}/v1`, apiKey: "test" })
  const tools = openaiTools(mcp.tools, { api: "chat" })
  const history: any[] = [{ role: "user", content: "go" }]
  const first = await client.chat.completions.create({ model: "gpt-test", messages: history, tools })
  const message = first.choices[0].message
  const replies = await runOpenAIToolCalls(mcp.tools, message.tool_calls ?? [])
  history.push(message, ...replies)
  const second = await client.chat.completions.create({ model: "gpt-test", messages: history, tools })
  assert.equal(second.choices[0].message.content, "done")
  assert.deepEqual(model.requests[0].body.tools[0], {
    type: "function",
    function: {
      name: "docs_search",
      description: "Searches the docs",
      parameters: providerSchema(mcp.tools[0], "openai-strict"),
      strict: true,
    },
  })
  assert.deepEqual(calls().find((c) => c.tool === "search").args, { query: "q", limit: 2 })
  assert.deepEqual(model.requests[1].body.messages.slice(2), [
    { role: "tool", tool_call_id: "c1", content: 'found for {"query":"q","limit":2}' },
    { role: "tool", tool_call_id: "c2", content: "Error: the index is offline" },
    { role: "tool", tool_call_id: "c3", content: 'Error: no tool named "docs_nope"' },
  ])
})

test("openai SDK, Responses: function_call items run, other items ignored, abort by signal", async (t) => {
  const { mcp, model, calls } = await setup(t, [
    responses.calls({ id: "c1", name: "docs_picture", arguments: {} }, { id: "c2", name: "docs_hang", arguments: {} }),
  ])
  const client = new OpenAI({ baseURL: `${model.url}/v1`, apiKey: "test" })
  const response = await client.responses.create({ model: "gpt-test", input: "go", tools: openaiTools(mcp.tools) })
  assert.equal(model.requests[0].body.tools[0].name, "docs_search")
  const [picture, ...rest] = await runOpenAIToolCalls(mcp.tools, [{ type: "reasoning", id: "r" }, response.output[0]])
  assert.deepEqual(rest, [], "the reasoning item is ignored")
  assert.equal(picture.call_id, "c1")
  assert.ok(Array.isArray(picture.output) && picture.output.some((p) => p.type === "input_image"))
  const controller = new AbortController()
  const running = runOpenAIToolCalls(mcp.tools, response.output.slice(1), { signal: controller.signal })
  assert.ok(await poll(() => calls().some((c) => c.event === "started"), 10_000))
  controller.abort()
  const [hang] = await running
  assert.equal(hang.call_id, "c2")
  assert.match(String(hang.output), /^Error: .*abort/)
  assert.ok(await poll(() => calls().some((c) => c.event === "cancelled"), 5_000), "the server was told")
})

test("@anthropic-ai/sdk: tool_result blocks with images, is_error and truncation; abort", async (t) => {
  const { mcp, model, calls } = await setup(t, [
    messages.uses(
      { id: "u1", name: "docs_search", input: { query: "z" } },
      { id: "u2", name: "docs_picture", input: {} },
      { id: "u3", name: "docs_broken", input: {} },
      { id: "u4", name: "docs_big", input: { n: 300 } },
    ),
    messages.text("done"),
    messages.uses({ id: "u5", name: "docs_hang", input: {} }),
  ])
  const client = new Anthropic({ baseURL: model.url, apiKey: "test" })
  const tools = anthropicTools(mcp.tools)
  const history: any[] = [{ role: "user", content: "go" }]
  const first = await client.messages.create({ model: "claude-test", max_tokens: 100, messages: history, tools })
  const results = await runAnthropicToolUses(mcp.tools, first.content, { maxOutputChars: 100 })
  history.push({ role: "assistant", content: first.content }, { role: "user", content: results })
  const second = await client.messages.create({ model: "claude-test", max_tokens: 100, messages: history, tools })
  assert.equal((second.content[0] as any).text, "done")
  assert.deepEqual(model.requests[0].body.tools[0], {
    name: "docs_search",
    description: "Searches the docs",
    input_schema: providerSchema(mcp.tools[0], "anthropic"),
  })
  assert.deepEqual(calls().find((c) => c.tool === "search").args, { query: "z" })
  const [search, picture, broken, big] = model.requests[1].body.messages[2].content
  assert.deepEqual(search, {
    type: "tool_result",
    tool_use_id: "u1",
    content: [{ type: "text", text: 'found for {"query":"z"}' }],
  })
  assert.deepEqual(picture.content.slice(0, 3), [
    { type: "text", text: "a picture" },
    { type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } },
    { type: "text", text: "[audio (audio/wav), 6 bytes not shown]" },
  ])
  assert.deepEqual(broken, {
    type: "tool_result",
    tool_use_id: "u3",
    content: [{ type: "text", text: "the index is offline" }],
    is_error: true,
  })
  assert.deepEqual(big.content, [
    { type: "text", text: "x".repeat(100) },
    { type: "text", text: "[toolnexus: output cut: 200 of 300 characters not shown]" },
  ])
  const third = await client.messages.create({ model: "claude-test", max_tokens: 100, messages: history, tools })
  const controller = new AbortController()
  const running = runAnthropicToolUses(mcp.tools, third.content, { signal: controller.signal })
  assert.ok(await poll(() => calls().some((c) => c.event === "started"), 10_000))
  controller.abort()
  const [hang] = await running
  assert.equal(hang.is_error, true)
  assert.match(JSON.stringify(hang.content), /abort/)
  assert.ok(await poll(() => calls().some((c) => c.event === "cancelled"), 5_000), "the server was told")
})

test("importing toolnexus reaches no adapter framework: its module graph names none", () => {
  const seen = new Set<string>()
  const bare = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const source = fs.readFileSync(file, "utf8")
    for (const [, spec] of source.matchAll(/(?:from|import\()\s*"([^"]+)"/g)) {
      if (spec.startsWith(".")) visit(path.resolve(path.dirname(file), spec))
      else bare.add(spec)
    }
  }
  visit(path.join(ROOT, "index.js"))
  assert.ok(seen.has(path.join(ROOT, "js/provider-schema.js")), "providerSchema is reached")
  assert.ok(![...seen].some((f) => f.includes("js/adapters/")), [...seen].join(", "))
  assert.deepEqual(
    [...bare].filter((spec) => !spec.startsWith("node:")).sort(),
    ["@modelcontextprotocol/sdk/server/index.js", "@modelcontextprotocol/sdk/types.js"].filter((s) => bare.has(s)),
  )
})

test("a server's maxOutputChars bounds what the adapters hand a model; a call's option wins", async (t) => {
  const mcp = await loadMcp({ docs: { command: [NODE, fixture("adapter-tools.mjs")], maxOutputChars: 50 } })
  t.after(() => mcp.close())
  const big = mcp.tools.find((tool) => tool.name === "docs_big")!
  assert.deepEqual(big.metadata, { server: "docs", tool: "big", maxOutputChars: 50 })
  const use = [{ type: "tool_use", id: "u", name: "docs_big", input: { n: 80 } }]
  const [server] = await runAnthropicToolUses(mcp.tools, use)
  assert.deepEqual(server.content?.at(-1), {
    type: "text",
    text: "[toolnexus: output cut: 30 of 80 characters not shown]",
  })
  const [call] = await runAnthropicToolUses(mcp.tools, use, { maxOutputChars: 70 })
  assert.deepEqual(call.content?.at(-1), {
    type: "text",
    text: "[toolnexus: output cut: 10 of 80 characters not shown]",
  })
  assert.equal((await big.execute({ n: 80 })).output.length, 80, "execute itself is not cut")
})
