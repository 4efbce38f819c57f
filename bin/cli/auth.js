// `toolnexus auth <server> [mcp.json]`: signs in to one remote server of the config the
// way a browser does (the authorization URL printed, and opened when the terminal is a
// person's), keeping the tokens in the default store; `--logout` forgets them.
import { spawn } from "node:child_process"

import * as native from "../../binding.js"
import { listMcpTools, parseMcpConfig } from "toolnexus"

import { safeLine } from "../../js/terminal.js"
import { configEntry } from "./call.js"
import { fail } from "./fail.js"
import { envState } from "./state.js"
import { bridgeState } from "../../js/state.js"

const usage = "usage: toolnexus auth <server> [mcp.json] [--logout]   (default: ./mcp.json)"

const help = `${usage}

Signs in to <server>, a remote server of the config that asks for OAuth: prints the
authorization URL (and opens it in a browser when run in a terminal), waits for the
browser to come back to a listener on 127.0.0.1, and keeps the tokens in
$XDG_CONFIG_HOME/toolnexus/oauth/ (or ~/.config/toolnexus/oauth/), readable by you alone.
loadMcp, listMcpTools and createMcpStore then use them, refreshing them as needed.

  --logout   forget the tokens kept for <server> instead
  -h, --help this text

Exits 0 when signed in (or out), 1 when signing in failed, 2 on a usage or config error.`

const options = { logout: { type: "boolean" }, help: { type: "boolean", short: "h" } }

/** How long a person has to sign in. */
const SIGN_IN_MS = 5 * 60_000

async function run(values, positionals) {
  const [server, file = "mcp.json", ...extra] = positionals
  if (!server || extra.length > 0) return fail(usage)
  if (values.logout) {
    let forgotten
    try {
      forgotten = await native.forgetSignIn({ path: file }, server, ...bridgeState(envState(), "toolnexus auth"))
    } catch (error) {
      return fail(`toolnexus: ${error.message}`)
    }
    if (!forgotten) return fail(`toolnexus auth: no enabled remote server "${server}" in ${file}`)
    console.log(safeLine(`signed out of "${server}"`))
    return 0
  }
  const { entry, exit } = configEntry(file, server, "toolnexus auth")
  if (exit !== undefined) return exit
  if (typeof entry?.url !== "string") return fail(`toolnexus auth: "${server}" in ${file} is not a remote server`)
  const onAuthorize = async (url) => {
    console.log(safeLine(`Sign in to "${server}" at:`))
    console.log(safeLine(`  ${url}`))
    if (process.stdout.isTTY) openBrowser(url.toString())
  }
  // The person's time counts against the entry's timeout: give them minutes.
  const timeout = Math.max(entry.timeout ?? 0, SIGN_IN_MS)
  const inventory = await listMcpTools(
    { [server]: { ...entry, timeout } },
    { oauth: { onAuthorize }, state: envState() },
  )
  if (inventory.status[server] !== "connected") return 1
  console.log(safeLine(`signed in to "${server}"`))
  return 0
}

/** Opens `url` in the desktop's browser, if there is one; never fails. */
function openBrowser(url) {
  const [command, ...args] =
    process.platform === "darwin"
      ? ["open", url]
      : process.platform === "win32"
        ? ["cmd", "/c", "start", "", url]
        : ["xdg-open", url]
  try {
    spawn(command, args, { stdio: "ignore", detached: true })
      .on("error", () => {})
      .unref()
  } catch {}
}

export const authCommand = { usage, help, options, run }
