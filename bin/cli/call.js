// `toolnexus call <server> <tool> [json-arguments]`: connects that one server of the
// config, calls the tool and prints its result.
import path from "node:path"

import { loadMcp, parseMcpConfig } from "toolnexus"

import { safeBlock, safeJson } from "../../js/terminal.js"
import { fail } from "./fail.js"
import { envState } from "./state.js"

const usage = "usage: toolnexus call <server> <tool> [json-arguments] [--config mcp.json] [--timeout ms] [--json]"

const help = `${usage}

Starts only <server> of the config, calls <tool> (its name as the server lists it, or
its toolnexus name) with the JSON object given (default {}), prints the result and
closes the server. The entry's "tools" filter does not apply: every tool can be tried.

  --config path  the mcp.json to read (default: ./mcp.json)
  --timeout ms   bound the call (default: the server's timeout)
  --json         print the whole result: { output, isError, metadata }
  -h, --help     this text

Exits 0 on a result, 1 on an error result or a server that failed to start, 2 on a
usage or config error.`

const options = {
  config: { type: "string" },
  timeout: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
}

async function run(values, positionals) {
  const [server, toolName, argsText = "{}", ...extra] = positionals
  if (!server || !toolName || extra.length > 0) return fail(usage)
  const args = parseArguments(argsText)
  if (typeof args === "string") return fail(`toolnexus call: ${args}`)
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout)
  if (timeout !== undefined && !(timeout > 0 && Number.isFinite(timeout))) {
    return fail(`toolnexus call: --timeout must be a positive number of milliseconds, got "${values.timeout}"`)
  }
  const file = values.config ?? "mcp.json"
  const { entry, exit } = configEntry(file, server, "toolnexus call")
  if (exit !== undefined) return exit

  const source = await loadMcp({ [server]: entry }, { state: envState() })
  try {
    const status = source.status[server]
    // A failed server's reason is already on stderr, from loadMcp.
    if (status === "failed") return 1
    if (status === "disabled") return fail(`toolnexus call: MCP server "${server}" is disabled in ${file}`)
    const tool = source.tools.find((t) => t.metadata.tool === toolName) ?? source.tools.find((t) => t.name === toolName)
    if (!tool) {
      const names = source.tools.map((t) => t.metadata.tool).join(", ") || "none"
      return fail(`toolnexus call: MCP server "${server}" has no tool "${toolName}"; it has: ${names}`)
    }
    const result = await tool.execute(args, { timeout })
    console.log(values.json ? safeJson(result) : safeBlock(result.output))
    return result.isError ? 1 : 0
  } finally {
    await source.close()
  }
}

/** The arguments as an object, or why they are not one. */
function parseArguments(text) {
  let args
  try {
    args = JSON.parse(text)
  } catch (error) {
    return `the arguments are not JSON: ${error.message}`
  }
  const isObject = args !== null && typeof args === "object" && !Array.isArray(args)
  return isObject ? args : "the arguments must be a JSON object"
}

/**
 * The entry of `server` in the config `file`, as the one-server commands connect it; or,
 * when there is none, `exit`: the exit code after saying why, prefixed by `command`.
 */
export function configEntry(file, server, command) {
  let entry
  try {
    entry = oneServer(parseMcpConfig(file), server, file)
  } catch (error) {
    return { exit: fail(`toolnexus: ${error.message}`) }
  }
  if (typeof entry === "string") return { exit: fail(`${command}: ${entry}`) }
  return { entry }
}

/**
 * The entry of `server`, ready to load on its own: its `tools` filter dropped and its
 * relative paths (`envFile`, a credential's `{ file }`) made relative to the config file,
 * as they would be read from it.
 */
function oneServer(servers, server, file) {
  const entry = servers[server]
  if (entry === undefined) {
    const names =
      Object.keys(servers)
        .map((n) => `"${n}"`)
        .join(", ") || "none"
    return `no MCP server "${server}" in ${file}; it has: ${names}`
  }
  // Not an object: loadMcp fails the server with the reason.
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return entry
  const { tools: _filter, ...rest } = entry
  const fromConfig = (relative) => rebased(relative, path.dirname(file))
  if (typeof rest.envFile === "string") rest.envFile = fromConfig(rest.envFile)
  const oauth = rest.oauth
  if (oauth?.assertion?.file !== undefined) {
    rest.oauth = { ...oauth, assertion: { ...oauth.assertion, file: fromConfig(oauth.assertion.file) } }
  }
  const idToken = rest.oauth?.idp?.idToken
  if (idToken?.file !== undefined) {
    const idp = { ...rest.oauth.idp, idToken: { ...idToken, file: fromConfig(idToken.file) } }
    rest.oauth = { ...rest.oauth, idp }
  }
  return rest
}

/**
 * `value` read from `dir` when it is a relative path. A path made of variables is left to
 * the loader, which reads an object's relative paths from the current directory.
 */
function rebased(value, dir) {
  if (typeof value !== "string" || value.includes("${") || path.isAbsolute(value)) return value
  return path.join(dir, value)
}

export const callCommand = { usage, help, options, run }
