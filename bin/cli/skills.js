// `toolnexus skills [mcp.json] [--json]`: the skills (MCP Skills extension, SEP-2640) of
// every server of the config, listed without reading any of their files; and
// `--load <server>/<name>`: start that one server, load the skill (SKILL.md read and
// verified against its listing) and print its body.
import { loadMcp, parseMcpConfig } from "toolnexus"

import { safeBlock, safeJson, safeLine } from "../../js/terminal.js"
import { configEntry } from "./call.js"
import { fail } from "./fail.js"
import { envState } from "./state.js"

const usage = "usage: toolnexus skills [mcp.json] [--load <server>/<name>] [--json]   (default: ./mcp.json)"

const help = `${usage}

Connects to every enabled server of the config and lists the skills of each server that
declares the skills extension: per skill its server and name, the first line of its
description, the URI of its SKILL.md and how many files it lists. No file is read.

  --load server/name  start only <server> and load its skill <name> (or the skill whose
                      SKILL.md has that URI): SKILL.md is read and checked against the
                      listing (size, digest, frontmatter), then its body printed
  --json              print the listing, or the loaded skill, as JSON
  -h, --help          this text

Exits 0 on an answer, 1 when a server failed or a skill was rejected, 2 on a usage or
config error.`

const options = {
  load: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
}

async function run(values, positionals) {
  if (positionals.length > 1) return fail(usage)
  const [file = "mcp.json"] = positionals
  return values.load === undefined ? list(values, file) : load(values, file, values.load)
}

/** Lists every server's skills; one server's rejected listing leaves the others shown. */
async function list(values, file) {
  let source
  try {
    source = await loadMcp(file, { state: envState() })
  } catch (error) {
    return fail(`toolnexus: ${error.message}`)
  }
  try {
    // A failed server's reason is already on stderr, from loadMcp.
    let exit = Object.values(source.status).includes("failed") ? 1 : 0
    const skills = []
    for (const [server, status] of Object.entries(source.status)) {
      if (status !== "connected") continue
      try {
        skills.push(...(await source.listSkills(server)))
      } catch (error) {
        console.error(safeBlock(`toolnexus: ${error.message}`))
        exit = 1
      }
    }
    if (values.json) console.log(safeJson(skills))
    else console.log(skills.length === 0 ? "no skills" : skills.map(describe).join("\n"))
    return exit
  } finally {
    await source.close()
  }
}

/** One listed skill for a person: `server/name: description`, then its URI and file count. */
function describe({ server, name, uri, frontmatter, resources }) {
  const description = String(frontmatter?.description ?? "").split("\n", 1)[0]
  const count = Array.isArray(resources) ? resources.length : undefined
  const files = count === undefined ? "files not listed (dynamic)" : `${count} file${count === 1 ? "" : "s"}`
  return `${safeLine(`${server}/${name}: ${description}`)}\n  ${safeLine(`${uri} (${files})`)}`
}

async function load(values, file, spec) {
  let servers
  try {
    servers = Object.keys(parseMcpConfig(file))
  } catch (error) {
    return fail(`toolnexus: ${error.message}`)
  }
  // A server's name may hold "/" itself: the longest configured name before one wins.
  const server = servers.filter((name) => spec.startsWith(`${name}/`)).sort((a, b) => b.length - a.length)[0]
  const skill = server === undefined ? "" : spec.slice(server.length + 1)
  if (!skill) {
    const names = servers.map((n) => `"${n}"`).join(", ") || "none"
    return fail(`toolnexus skills: --load wants <server>/<name> with a server of ${file}; it has: ${names}`)
  }
  const { entry, exit } = configEntry(file, server, "toolnexus skills")
  if (exit !== undefined) return exit
  const source = await loadMcp({ [server]: entry }, { state: envState() })
  try {
    const status = source.status[server]
    if (status === "disabled") return fail(`toolnexus skills: MCP server "${server}" is disabled in ${file}`)
    if (status !== "connected") return 1
    let loaded
    try {
      loaded = await source.loadSkill(server, skill)
    } catch (error) {
      console.error(safeBlock(`toolnexus: ${error.message}`))
      return 1
    }
    const { uri, name, frontmatter, body, files, verified } = loaded
    if (values.json) console.log(safeJson({ server, uri, name, frontmatter, body, files, verified }))
    else console.log(safeBlock(body.replace(/\n$/, "")))
    return 0
  } finally {
    await source.close()
  }
}

export const skillsCommand = { usage, help, options, run }
