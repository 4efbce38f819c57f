import assert from "node:assert/strict"
import { describe, it } from "node:test"
// Imported from its module, not from "toolnexus": these tests must run without the native addon.
import { defineTool } from "../js/define-tool.js"

const tool = (run: (args: any, ctx: any) => unknown) => defineTool({ name: "t", description: "d", run })

describe("defineTool", () => {
  it("builds a plain native Tool with a closed, empty default schema", () => {
    const t = tool(() => "")
    assert.equal(t.name, "t")
    assert.equal(t.description, "d")
    assert.equal(t.source, "native")
    assert.deepEqual(t.inputSchema, { type: "object", properties: {}, additionalProperties: false })
    assert.equal(typeof t.execute, "function")
  })

  it("keeps a given inputSchema as is", () => {
    const inputSchema = { type: "object", properties: { q: { type: "string" } }, required: ["q"] }
    assert.equal(defineTool({ name: "s", description: "", inputSchema, run: () => "" }).inputSchema, inputSchema)
  })

  it("gives each tool its own default schema object", () => {
    assert.notEqual(tool(() => "").inputSchema, tool(() => "").inputSchema)
  })

  it("rejects a definition without a name or a run function", () => {
    assert.throws(() => defineTool({ name: "", description: "", run: () => "" }), TypeError)
    assert.throws(() => defineTool({ name: "x", description: "", run: undefined as any }), TypeError)
  })

  it("passes args (or {}) and ctx (or {}) to run", async () => {
    const seen: unknown[] = []
    const t = tool((args, ctx) => {
      seen.push(args, ctx)
      return ""
    })
    const ctx = { signal: new AbortController().signal }
    await t.execute({ a: 1 }, ctx)
    await t.execute(undefined as any)
    assert.deepEqual(seen[0], { a: 1 })
    assert.equal(seen[1], ctx)
    assert.deepEqual(seen[2], {})
    assert.deepEqual(seen[3], {})
  })

  it("turns a string into a successful output", async () => {
    assert.deepEqual(await tool(() => "hi").execute({}), { output: "hi", isError: false })
  })

  it("awaits an async run", async () => {
    assert.deepEqual(await tool(async () => "later").execute({}), { output: "later", isError: false })
  })

  it("returns an object with output and isError as is", async () => {
    const result = { output: "bad input", isError: true, metadata: { why: 1 } }
    assert.equal(await tool(() => result).execute({}), result)
  })

  it("JSON-stringifies any other value", async () => {
    const cases: [unknown, string][] = [
      [{ a: [1, "x"] }, '{"a":[1,"x"]}'],
      [{ output: "only output" }, '{"output":"only output"}'],
      [[1, 2], "[1,2]"],
      [42, "42"],
      [false, "false"],
      [null, "null"],
    ]
    for (const [value, output] of cases) {
      assert.deepEqual(await tool(() => value).execute({}), { output, isError: false }, String(output))
    }
  })

  it("gives an empty output for undefined", async () => {
    assert.deepEqual(await tool(() => undefined).execute({}), { output: "", isError: false })
  })

  it("turns a sync throw, a rejection and a non-Error throw into error results", async () => {
    assert.deepEqual(
      await tool(() => {
        throw new Error("boom")
      }).execute({}),
      { output: "boom", isError: true },
    )
    assert.deepEqual(await tool(async () => Promise.reject(new TypeError("nope"))).execute({}), {
      output: "nope",
      isError: true,
    })
    assert.deepEqual(
      await tool(() => {
        throw "plain string"
      }).execute({}),
      { output: "plain string", isError: true },
    )
    assert.deepEqual(
      await tool(() => {
        throw 7
      }).execute({}),
      { output: "7", isError: true },
    )
  })

  it("never rejects, even for values that cannot be stringified", async () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const r1 = await tool(() => cyclic).execute({})
    assert.equal(r1.isError, true)
    assert.match(r1.output, /circular/i)
    const r2 = await tool(() => 1n).execute({})
    assert.equal(r2.isError, true)
    const r3 = await tool(() => {
      throw Object.create(null)
    }).execute({})
    assert.equal(r3.isError, true)
    assert.equal(typeof r3.output, "string")
  })
})
