// A gateway in front of an upstream written with fastmcp (the TypeScript framework): both
// official clients, in their eras, list and call its tools (with progress), read its
// resource and get its prompt through the gateway.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { fixture, NODE } from "./helpers.js"
import { LEGACY, MODERN, served, sorted, textOf, v1Http, v2Http } from "./serve-helpers.js"

const fast = { fast: { command: [NODE, fixture("serve-fastmcp.mjs")] } }

describe("serveMcp: a fastmcp upstream", { timeout: 60_000 }, () => {
  test("SDK v1 (2025-11-25) and SDK v2 (2026-07-28) clients reach its tools, resource and prompt", async (t) => {
    const s = await served(t, fast)
    const { client: v1, transport } = await v1Http(s.later, s.url)
    assert.equal(transport.protocolVersion, LEGACY)
    const v2 = await v2Http(s.later, s.url)
    assert.equal(v2.getNegotiatedProtocolVersion(), MODERN)
    for (const client of [v1, v2]) {
      assert.deepEqual(sorted((await client.listTools()).tools), ["fast_count", "fast_greet"])
      const greeted = await client.callTool({ name: "fast_greet", arguments: { name: "Ada" } })
      assert.equal(textOf(greeted as never), "Hello, Ada!")
      const read = await client.readResource({ uri: "file:///fast/readme" })
      assert.deepEqual(
        read.contents.map((c) => ("text" in c ? c.text : c.uri)),
        ["fast readme"],
      )
      // Not listed first: the gateway learns the name when it is asked for.
      const prompt = await client.getPrompt({ name: "fast_hello", arguments: { who: "Bo" } })
      const message = prompt.messages[0].content
      assert.equal(message.type === "text" ? message.text : message.type, "Say hello to Bo")
      assert.deepEqual(sorted((await client.listPrompts()).prompts), ["fast_hello"])
    }
    const progress: number[] = []
    const counted = await v1.callTool({ name: "fast_count", arguments: { steps: 3 } }, CallToolResultSchema, {
      onprogress: (p) => progress.push(p.progress),
    })
    assert.equal(textOf(counted), "counted 3")
    assert.deepEqual(progress, [1, 2, 3])
  })
})
