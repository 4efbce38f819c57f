#!/usr/bin/env node
// The toolnexus CLI: `list` (which servers of an mcp.json come up, how, and with what
// tools), `call` (try one tool of one server), `auth` (sign in to a server that asks for
// OAuth, or out), `schema` (the mcp.json JSON Schema), `read` (a resource), `prompt`
// (a prompt's messages), `skills` (the servers' skills, or one skill loaded) and `serve`
// (the servers as one MCP endpoint).
// Exit codes: 0 all good, 1 a server failed or a tool answered an error, 2 a usage or
// config error. Everything printed passes through js/terminal.js.
import { parseArgs } from "node:util"

import { authCommand } from "./cli/auth.js"
import { callCommand } from "./cli/call.js"
import { listCommand } from "./cli/list.js"
import { promptCommand, readCommand } from "./cli/offer.js"
import { schemaCommand } from "./cli/mcp-schema.js"
import { serveCommand } from "./cli/serve.js"
import { skillsCommand } from "./cli/skills.js"
import { safeLine } from "../js/terminal.js"

const COMMANDS = {
  list: listCommand,
  call: callCommand,
  auth: authCommand,
  schema: schemaCommand,
  read: readCommand,
  prompt: promptCommand,
  skills: skillsCommand,
  serve: serveCommand,
}

const USAGE = `usage: toolnexus list [mcp.json] [--json]
       toolnexus call <server> <tool> [json-arguments] [--config mcp.json] [--timeout ms] [--json]
       toolnexus auth <server> [mcp.json] [--logout]
       toolnexus schema
       toolnexus read <server> <uri> [--config mcp.json] [--json]
       toolnexus prompt <server> <name> [json-arguments] [--config mcp.json] [--json]
       toolnexus skills [mcp.json] [--load <server>/<name>] [--json]
       toolnexus serve [mcp.json] [--http HOST:PORT] [--stdio] [--agent ID] [--state URL] [--meta]
Run "toolnexus <command> --help" for what each does.`

const [name, ...rest] = process.argv.slice(2)
const command = COMMANDS[name]
if (!command) {
  console.error(USAGE)
  process.exit(2)
}

let parsed
try {
  parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true })
} catch (error) {
  console.error(`toolnexus ${name}: ${safeLine(error.message)}\n${command.usage}`)
  process.exit(2)
}
if (parsed.values.help) {
  console.log(command.help)
  process.exit(0)
}
process.exitCode = await command.run(parsed.values, parsed.positionals)
