// A ToolResult as a model reads it: its parts (text, images, audio; resources named as
// text), with the text cut to a limit and a marker saying how much was cut. Each adapter
// turns these parts into its provider's blocks.
import { invalidArgument } from "../errors.js"

/** What adapters hand a model at most, in characters (UTF-16 units), unless told otherwise. */
export const DEFAULT_MAX_OUTPUT_CHARS = 100_000

/** The limit for `tool`: the call's option, else the server's `maxOutputChars`, else the default. */
export function outputLimit(tool, opts) {
  const limit = opts?.maxOutputChars ?? tool?.metadata?.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS
  if (typeof limit !== "number" || !(limit >= 0)) throw invalidArgument("maxOutputChars must be a number of characters")
  return limit
}

/**
 * The result as `[{ type: "text", text } | { type: "image" | "audio", data, mimeType }]`.
 * Rich results come from the content the server sent (`metadata.content`); others from
 * `output`, which also carries `structuredContent` as JSON.
 */
export function resultParts(result, limit) {
  const content = result?.metadata?.content
  const parts = Array.isArray(content) && !result.isError ? content.map(part) : [text(String(result?.output ?? ""))]
  return cut(parts, limit)
}

const text = (value) => ({ type: "text", text: value })

function part(block) {
  switch (block?.type) {
    case "text":
      return text(String(block.text ?? ""))
    case "image":
    case "audio":
      return { type: block.type, data: String(block.data ?? ""), mimeType: String(block.mimeType ?? "") }
    case "resource_link":
      return text(`[resource link: ${block.uri}${kind(block.mimeType)}${block.name ? ` "${block.name}"` : ""}]`)
    case "resource": {
      const r = block.resource ?? {}
      if (typeof r.text === "string") return text(`[resource ${r.uri}${kind(r.mimeType)}]\n${r.text}`)
      const size = typeof r.blob === "string" ? `, ${Math.floor((r.blob.length * 3) / 4)} bytes not shown` : ""
      return text(`[resource ${r.uri}${kind(r.mimeType)}${size}]`)
    }
    default:
      return text(`[content of type ${JSON.stringify(block?.type)} not shown]`)
  }
}

const kind = (mimeType) => (mimeType ? ` (${mimeType})` : "")

/** Cuts text parts once `limit` characters of text are used; media parts are kept. */
function cut(parts, limit) {
  const total = parts.reduce((n, p) => n + (p.type === "text" ? p.text.length : 0), 0)
  if (total <= limit) return parts
  let left = limit
  const out = []
  for (const p of parts) {
    if (p.type !== "text") {
      out.push(p)
    } else if (left > 0) {
      let end = Math.min(left, p.text.length)
      // Never split a surrogate pair.
      if (end < p.text.length && /[\uD800-\uDBFF]/.test(p.text[end - 1] ?? "")) end--
      out.push(text(p.text.slice(0, end)))
      left -= end
    }
  }
  out.push(text(`[toolnexus: output cut: ${total - limit} of ${total} characters not shown]`))
  return out
}

/** Text parts joined, media named: for providers whose tool results carry only text. */
export function textOnly(parts) {
  return parts
    .map((p) =>
      p.type === "text"
        ? p.text
        : `[${p.type} (${p.mimeType}), ${Math.floor((p.data.length * 3) / 4)} bytes not shown]`,
    )
    .join("\n")
}

/** A call's failure before it reached a tool (an unknown name, arguments that are not JSON), with its code. */
export const refused = (output, code) => ({ output, isError: true, metadata: { code } })

/** `args` as a JSON object, or the reason it is not one. */
export function parseArguments(json) {
  if (json === undefined || json === null || json === "") return { args: {} }
  if (typeof json === "object") return { args: json }
  try {
    const args = JSON.parse(json)
    if (args !== null && typeof args === "object" && !Array.isArray(args)) return { args }
  } catch {}
  return { error: "the tool call's arguments are not a JSON object" }
}

/** Tools by name, for the run functions. */
export function byName(tools) {
  const map = new Map()
  for (const tool of tools) map.set(tool.name, tool)
  return map
}
