// MCP Apps' visibility rule: a tool only an app's view may see carries `visibility:
// ["app"]`, and nothing that hands tools to a model passes it on or runs it for one.

/** What a tool only an app's view may see and call carries as its `visibility`. */
export const APP_ONLY = Object.freeze(["app"])

/** Whether a model may see and call `tool`: it has no `visibility`, or one naming "model". */
export function forModel(tool) {
  const audiences = tool?.visibility
  return !Array.isArray(audiences) || audiences.length === 0 || audiences.includes("model")
}

/** The result a model's call of a tool only an app's view may call gets. */
export const appOnlyRefusal = (name) => ({
  output: `tool ${JSON.stringify(name)} is for an app's view only (its _meta.ui.visibility does not name "model"), so a model may not call it`,
  isError: true,
  metadata: { code: "TOOLNEXUS_APP_ONLY_TOOL" },
})
