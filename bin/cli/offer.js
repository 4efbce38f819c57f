// `toolnexus read <server> <uri>` and `toolnexus prompt <server> <name> [json-args]`:
// connect that one server of the config, read the resource or get the prompt, print it
// (control characters escaped) and close the server.
import { loadMcp } from "toolnexus"

import { safeBlock, safeJson, safeLine } from "../../js/terminal.js"
import { configEntry } from "./call.js"
import { fail } from "./fail.js"
import { envState } from "./state.js"

const options = {
  config: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
}

const common = `  --config path  the mcp.json to read (default: ./mcp.json)
  --json         print the whole result as JSON
  -h, --help     this text

Exits 0 on an answer, 1 when the server failed or answered an error, 2 on a usage or
config error.`

/** Loads only `server` of the config and runs `ask(source)`, printing what it answers. */
async function withServer(values, server, ask, print) {
  const file = values.config ?? "mcp.json"
  const { entry, exit } = configEntry(file, server, "toolnexus")
  if (exit !== undefined) return exit
  const source = await loadMcp({ [server]: entry }, { state: envState() })
  try {
    // A failed server's reason is already on stderr, from loadMcp.
    if (source.status[server] !== "connected") return 1
    let answer
    try {
      answer = await ask(source)
    } catch (error) {
      console.error(safeBlock(`toolnexus: ${error.message}`))
      return 1
    }
    console.log(values.json ? safeJson(answer) : print(answer))
    return 0
  } finally {
    await source.close()
  }
}

/** One content item or message content for a person: text as it is, anything else named. */
function describe(item) {
  if (typeof item.text === "string") return safeBlock(item.text)
  if (typeof item.blob === "string")
    return safeLine(`[blob ${item.mimeType ?? ""}, ${item.blob.length} base64 characters]`)
  return safeLine(`[${item.type ?? "content"} ${item.mimeType ?? item.uri ?? ""}]`)
}

const readUsage = "usage: toolnexus read <server> <uri> [--config mcp.json] [--json]"

export const readCommand = {
  usage: readUsage,
  help: `${readUsage}

Starts only <server> of the config, reads the resource <uri> (resources/read) and
prints its contents: text as it is, a blob by its type and size.

${common}`,
  options,
  run(values, positionals) {
    const [server, uri, ...extra] = positionals
    if (!server || !uri || extra.length > 0) return fail(readUsage)
    const print = ({ contents = [] }) => contents.map(describe).join("\n")
    return withServer(values, server, (source) => source.readResource(server, uri), print)
  },
}

const promptUsage = "usage: toolnexus prompt <server> <name> [json-arguments] [--config mcp.json] [--json]"

export const promptCommand = {
  usage: promptUsage,
  help: `${promptUsage}

Starts only <server> of the config, gets the prompt <name> (prompts/get) with the
arguments given (a JSON object of strings, default none) and prints its messages.

${common}`,
  options,
  run(values, positionals) {
    const [server, name, argsText, ...extra] = positionals
    if (!server || !name || extra.length > 0) return fail(promptUsage)
    let args
    if (argsText !== undefined) {
      try {
        args = JSON.parse(argsText)
      } catch (error) {
        return fail(`toolnexus prompt: the arguments are not JSON: ${error.message}`)
      }
      if (args === null || typeof args !== "object" || Array.isArray(args)) {
        return fail("toolnexus prompt: the arguments must be a JSON object")
      }
    }
    const print = ({ description, messages = [] }) => {
      const lines = description === undefined ? [] : [safeLine(description)]
      for (const { role, content } of messages) lines.push(`${safeLine(role)}: ${describe(content ?? {})}`)
      return lines.join("\n")
    }
    return withServer(values, server, (source) => source.getPrompt(server, name, args), print)
  },
}
