// providerSchema: every profile's schemas checked against that provider's documented
// constraints, over the schemas real servers list and hostile ones.
import assert from "node:assert/strict"
import { test } from "node:test"

import { listMcpTools, providerSchema, type JSONSchema, type SchemaProfile } from "../index.js"
import {
  anthropicProblems,
  geminiProblems,
  hostileSchemas,
  openaiProblems,
  openaiStrictProblems,
} from "./adapters/validators.js"
import { NODE, fixture, serverCmd } from "./helpers.js"

const validators: Record<SchemaProfile, (s: any) => string[]> = {
  "openai-strict": openaiStrictProblems,
  openai: openaiProblems,
  anthropic: anthropicProblems,
  gemini: geminiProblems,
  portable: (s) => [...geminiProblems(s), ...openaiProblems(s), ...anthropicProblems(s)],
}

async function corpus(): Promise<Record<string, JSONSchema>> {
  const inventory = await listMcpTools({
    fixture: { command: serverCmd() },
    sdk: { command: [NODE, fixture("adapter-tools.mjs")] },
    v2: { command: [NODE, fixture("v2-server.mjs")] },
  })
  const schemas: Record<string, JSONSchema> = {}
  for (const [server, tools] of Object.entries(inventory.tools))
    for (const tool of tools) schemas[`${server}/${tool.name}`] = tool.inputSchema
  assert.ok(Object.keys(schemas).length >= 15, "the servers listed their tools")
  return { ...schemas, ...hostileSchemas() }
}

test("every profile's schemas meet that provider's documented constraints", async () => {
  const schemas = await corpus()
  for (const profile of Object.keys(validators) as SchemaProfile[]) {
    for (const [name, schema] of Object.entries(schemas)) {
      const made = providerSchema(schema, profile)
      let problems = validators[profile](made)
      // openai-strict falls back to the openai schema (sent with strict: false) when strict
      // mode cannot express the tool; that one must then meet the openai rules.
      if (profile === "openai-strict" && problems.length > 0) {
        assert.deepEqual(made, providerSchema(schema, "openai"), `${name}: a strict failure falls back to openai`)
        problems = openaiProblems(made)
      }
      assert.deepEqual(problems, [], `${profile} ${name}: ${JSON.stringify(made)}`)
    }
  }
})

test("strict mode covers the usual schemas; only what it cannot express falls back", async () => {
  const schemas = await corpus()
  const strict = (name: string) => openaiStrictProblems(providerSchema(schemas[name], "openai-strict")).length === 0
  for (const name of ["sdk/search", "fixture/echo", "fixture/env", "objectUnion", "rootUnion", "wide"])
    assert.ok(strict(name), `${name} is strict`)
  for (const name of ["deep", "cycle", "mixedEnum"]) assert.ok(!strict(name), `${name} cannot be strict`)
})

test("the validators catch the raw schemas the providers reject", async () => {
  const hostile = hostileSchemas()
  assert.ok(geminiProblems(hostile.mixedEnum).length > 0)
  assert.ok(openaiStrictProblems(hostile.objectUnion).length > 0)
  assert.ok(anthropicProblems(hostile.rootUnion).length > 0)
  assert.ok(openaiProblems(hostile.cycle).length > 0)
})

test("schemas are made once per schema object and profile", () => {
  const schema = { type: "object", properties: { a: { type: "string" } } }
  assert.equal(providerSchema(schema, "gemini"), providerSchema(schema, "gemini"))
  assert.notEqual(providerSchema(schema, "gemini"), providerSchema(schema, "openai"))
  assert.deepEqual(providerSchema(schema), { type: "object", properties: { a: { type: "string" } } })
  assert.throws(() => providerSchema(schema, "claude" as SchemaProfile), {
    message: 'unknown schema profile "claude": expected one of openai-strict, openai, anthropic, gemini, portable',
  })
})

test("constraints a provider drops reach the model in the description", () => {
  const made = providerSchema(
    { type: "object", properties: { url: { type: "string", format: "uri", minLength: 8, description: "where" } } },
    "openai-strict",
  )
  assert.deepEqual(made.properties?.url, {
    type: ["string", "null"],
    description: "where (format: uri) (minLength: 8)",
  })
})
