/** What the binding reads a config from: a path to an mcp.json, or the config as JSON text. */
export const configSource = (input) =>
  typeof input === "string" ? { path: input } : { json: JSON.stringify(input) ?? "null" }
