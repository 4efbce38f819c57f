// defineTool: a plain JavaScript function as a `Tool` (contract, "Tools defined in JavaScript").
import { invalidArgument } from "./errors.js"

/** @typedef {import("../index.d.ts").ToolContext} ToolContext */

/**
 * @param {{ name: string, description: string, inputSchema?: import("../index.d.ts").JSONSchema,
 *   run: (args: Record<string, any>, ctx: ToolContext) => unknown }} def
 * @returns {import("../index.d.ts").Tool}
 */
export function defineTool(def) {
  const { name, description, inputSchema, run } = def ?? {}
  // Fail at definition time: a nameless or run-less tool would only surface later,
  // as a confusing error inside an MCP server or an agent loop.
  if (typeof name !== "string" || name === "") {
    throw invalidArgument("defineTool: `name` must be a non-empty string")
  }
  if (typeof run !== "function") {
    throw invalidArgument(`defineTool: tool "${name}" needs a \`run\` function`)
  }
  return {
    name,
    description: description ?? "",
    // A fresh object per tool, so mutating one tool's schema never leaks into another.
    inputSchema: inputSchema ?? { type: "object", properties: {}, additionalProperties: false },
    source: "native",
    // Never rejects: every failure becomes an error result, like an MCP tool's.
    async execute(args, ctx) {
      try {
        // `ctx ?? {}` so `run` can destructure `{ signal }` even when called without a context.
        return toResult(await run(args ?? {}, ctx ?? {}))
      } catch (err) {
        return { output: errorMessage(err), isError: true }
      }
    },
  }
}

/** @param {unknown} value @returns {import("../index.d.ts").ToolResult} */
function toResult(value) {
  if (typeof value === "string") return { output: value, isError: false }
  if (value !== null && typeof value === "object" && "output" in value && "isError" in value) {
    return /** @type {import("../index.d.ts").ToolResult} */ (value)
  }
  // `undefined` (a run with nothing to return) and values JSON cannot represent
  // (functions, symbols) give an empty output rather than the string "undefined".
  // JSON.stringify may throw (BigInt, cycles): the caller turns that into an error result.
  return { output: JSON.stringify(value) ?? "", isError: false }
}

/** @param {unknown} err */
function errorMessage(err) {
  // An Error with an empty message still says something ("Error", "TypeError").
  if (err instanceof Error) return err.message || String(err)
  try {
    return String(err)
  } catch {
    // String() throws for objects without a prototype or with a throwing toString.
    return "tool threw a value that cannot be converted to a string"
  }
}
