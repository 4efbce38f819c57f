/** The search catalog: at least `min` tools (default 2,000), known ones first. */
export function catalog(min?: number): Array<{
  server: string
  name: string
  description: string
  inputSchema: { type: "object"; properties: Record<string, { type: string; description: string }> }
}>
/** [what a user asks for, the tool meant as `server_tool`] */
export const QUERIES: Array<[string, string]>
