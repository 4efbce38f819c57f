// Each provider's documented constraints on a tool's schema, as checks: a list of what
// breaks them (empty when the schema would be accepted).
// OpenAI: Structured Outputs guide, "Supported schemas" (keywords, formats, limits) and
// function calling (`parameters` an object schema, arrays with `items`).
// Gemini: the `Schema` reference of function declarations (an OpenAPI 3.0 subset).
// Anthropic: tool `input_schema`, an object schema without a top-level combinator.

type Schema = Record<string, any>

const TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"]
const STRICT_KEYS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "anyOf",
  "description",
  "pattern",
  "format",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "minItems",
  "maxItems",
])
const STRICT_FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"])
const GEMINI_KEYS = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum",
])
const GEMINI_FORMATS: Record<string, string[]> = {
  string: ["enum", "date-time"],
  number: ["float", "double"],
  integer: ["int32", "int64"],
}

/** Calls `check(node, path, depth)` on every subschema. */
function walk(schema: any, check: (node: Schema, path: string, depth: number) => void, path = "$", depth = 1) {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return
  check(schema, path, depth)
  for (const [name, sub] of Object.entries(schema.properties ?? {})) walk(sub, check, `${path}.${name}`, depth + 1)
  if (schema.items && typeof schema.items === "object") walk(schema.items, check, `${path}[]`, depth + 1)
  for (const [i, sub] of (schema.anyOf ?? []).entries()) walk(sub, check, `${path}|${i}`, depth)
}

function objectRoot(schema: Schema, problems: string[]) {
  if (schema?.type !== "object") problems.push("$: the root is not type object")
  for (const key of ["anyOf", "oneOf", "allOf"]) if (key in (schema ?? {})) problems.push(`$: ${key} at the root`)
}

export function openaiStrictProblems(schema: Schema): string[] {
  const problems: string[] = []
  objectRoot(schema, problems)
  let properties = 0
  let enumValues = 0
  walk(schema, (node, path, depth) => {
    if (depth > 10) problems.push(`${path}: more than 10 levels of nesting`)
    for (const key of Object.keys(node)) if (!STRICT_KEYS.has(key)) problems.push(`${path}: keyword ${key}`)
    const types = [node.type].flat().filter((t) => t !== undefined)
    for (const t of types) if (!TYPES.includes(t)) problems.push(`${path}: type ${t}`)
    if (types.length === 0 && !node.anyOf && !node.enum && !("const" in node)) problems.push(`${path}: no type`)
    if (types.includes("object") || node.properties) {
      if (node.additionalProperties !== false) problems.push(`${path}: additionalProperties is not false`)
      const names = Object.keys(node.properties ?? {})
      const required = node.required ?? []
      if (names.length !== required.length || !names.every((n) => required.includes(n)))
        problems.push(`${path}: not every property is required`)
      properties += names.length
    }
    if (types.includes("array") && (typeof node.items !== "object" || Array.isArray(node.items)))
      problems.push(`${path}: array without an items schema`)
    if (node.format !== undefined && !STRICT_FORMATS.has(node.format)) problems.push(`${path}: format ${node.format}`)
    if (Array.isArray(node.enum)) enumValues += node.enum.length
  })
  if (properties > 5000) problems.push(`$: ${properties} properties`)
  if (enumValues > 1000) problems.push(`$: ${enumValues} enum values`)
  return problems
}

export function openaiProblems(schema: Schema): string[] {
  const problems: string[] = []
  objectRoot(schema, problems)
  walk(schema, (node, path) => {
    if ("$ref" in node) problems.push(`${path}: $ref`)
    if ([node.type].flat().includes("array") && !("items" in node)) problems.push(`${path}: array without items`)
  })
  return problems
}

export function anthropicProblems(schema: Schema): string[] {
  const problems: string[] = []
  objectRoot(schema, problems)
  walk(schema, (node, path) => {
    if ("$ref" in node) problems.push(`${path}: $ref`)
  })
  return problems
}

export function geminiProblems(schema: Schema): string[] {
  const problems: string[] = []
  if (schema?.type !== "object") problems.push("$: the root is not type object")
  walk(schema, (node, path) => {
    for (const key of Object.keys(node)) if (!GEMINI_KEYS.has(key)) problems.push(`${path}: keyword ${key}`)
    if (node.type !== undefined && (typeof node.type !== "string" || !TYPES.slice(0, 6).includes(node.type)))
      problems.push(`${path}: type ${JSON.stringify(node.type)}`)
    if (
      node.enum !== undefined &&
      !(Array.isArray(node.enum) && node.enum.every((v: unknown) => typeof v === "string"))
    )
      problems.push(`${path}: an enum of non-strings`)
    if (node.format !== undefined && !(GEMINI_FORMATS[node.type] ?? []).includes(node.format))
      problems.push(`${path}: format ${node.format} on ${node.type}`)
    if (node.properties !== undefined && Object.keys(node.properties).length === 0)
      problems.push(`${path}: empty properties`)
    for (const name of node.required ?? [])
      if (!(name in (node.properties ?? {}))) problems.push(`${path}: required ${name} is not a property`)
  })
  return problems
}

/** Hostile schemas: deep nesting, cycles, anyOf of objects, mixed enums, 200 properties. */
export function hostileSchemas(): Record<string, Schema> {
  let deep: Schema = { type: "string" }
  for (let i = 0; i < 40; i++)
    deep = { type: "object", properties: { next: deep, [`v${i}`]: { type: ["string", "null"] } } }
  const wide: Schema = { type: "object", properties: {} as Schema }
  for (let i = 0; i < 200; i++)
    wide.properties[`p${i}`] = { type: i % 2 ? "integer" : "string", format: i % 3 ? "uri" : "date-time" }
  return {
    deep,
    wide,
    cycle: {
      type: "object",
      properties: { root: { $ref: "#/$defs/node" } },
      $defs: {
        node: {
          type: "object",
          properties: { kids: { type: "array", items: { $ref: "#/$defs/node" } }, me: { $ref: "#" } },
        },
      },
    },
    objectUnion: {
      type: "object",
      properties: {
        shape: {
          anyOf: [
            { type: "object", properties: { r: { type: "number" } }, required: ["r"] },
            { type: "object", properties: { w: { type: "number" }, h: { type: "number" } } },
          ],
        },
      },
    },
    rootUnion: {
      oneOf: [
        { type: "object", properties: { a: { type: "string" } } },
        { type: "object", properties: { b: { const: 3 } } },
      ],
    },
    mixedEnum: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        level: { enum: [1, "two", true, null] },
        kind: { type: ["string", "integer", "null"] },
        anyTags: { type: "object", additionalProperties: { type: "string" } },
        free: {},
        list: { type: "array" },
        all: {
          allOf: [
            { type: "object", properties: { x: { type: "string" } } },
            { properties: { y: { type: "string" } }, required: ["y"] },
          ],
        },
        not: { not: { type: "string" } },
        dangling: { $ref: "#/$defs/missing" },
        remote: { $ref: "https://example.com/schema.json" },
      },
      required: ["level", "ghost"],
    },
  }
}
