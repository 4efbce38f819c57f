// The README's framework examples, run verbatim as a user would (from the repository root,
// importing "toolnexus" through the package's self-reference), each SDK pointed by its
// documented environment variable at a stand-in for its provider on 127.0.0.1, which asks
// for the demo server's `add` tool and then answers with text.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { test } from "node:test"

import { messages, modelServer, responses } from "./adapters/model-server.js"
import { ROOT, runNode } from "./helpers.js"

function example(name: string): string {
  const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8")
  const match = new RegExp(`<!-- runs as a test: ${name} -->\\n\`\`\`js\\n([\\s\\S]*?)\`\`\``).exec(readme)
  assert.ok(match, `README has the ${name} example`)
  return match[1]
}

const args = { a: 2, b: 3 }
const cases = {
  ai: [responses.calls({ id: "c1", name: "demo_add", arguments: args }), responses.text("2 + 3 = 5")],
  openai: [responses.calls({ id: "c1", name: "demo_add", arguments: args }), responses.text("2 + 3 = 5")],
  anthropic: [messages.uses({ id: "u1", name: "demo_add", input: args }), messages.text("2 + 3 = 5")],
}

for (const [name, replies] of Object.entries(cases)) {
  test(`README example: ${name}`, async (t) => {
    const model = await modelServer(replies)
    t.after(() => model.close())
    const run = await runNode(example(name), {
      env: {
        ...process.env,
        OPENAI_BASE_URL: `${model.url}/v1`,
        OPENAI_API_KEY: "test",
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: "test",
      },
    })
    assert.equal(run.code, 0, run.stderr)
    assert.equal(run.stdout.trim(), "2 + 3 = 5")
    assert.equal(model.requests.length, 2)
    const second = JSON.stringify(model.requests[1].body)
    assert.match(
      second,
      name === "anthropic"
        ? /"tool_use_id":"u1","content":\[\{"type":"text","text":"5"\}\]/
        : /"call_id":"c1","output":"5"/,
    )
  })
}
