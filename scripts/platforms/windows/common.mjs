// What the Windows run's host and check share: the config and a tool call.
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))

/** Arguments `cmd.exe` would split, expand or run if they were not quoted for it. */
export const awkward = ["two words", 'a "quoted" word', "50% & echo injected", "^|<>", ""]

/**
 * `"command": "server"` is found as `server.cmd` through PATH and PATHEXT, as `npx` is
 * found as `npx.cmd`.
 */
export function config() {
  return {
    win: {
      command: "server",
      args: awkward,
      environment: { PATH: `${here};${path.dirname(process.execPath)}` },
    },
  }
}

/** Calls the server's tool `name` and returns what it answered. */
export async function call(mcp, name) {
  const tool = mcp.tools.find((t) => t.name === `win_${name}`)
  if (!tool) throw new Error(`no tool win_${name} among ${mcp.tools.map((t) => t.name)}`)
  const result = await tool.execute({})
  if (result.isError) throw new Error(`win_${name} failed: ${JSON.stringify(result)}`)
  return JSON.parse(result.output)
}

/** Whether a process is alive, by the only probe that works on every OS. */
export function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return e.code === "EPERM"
  }
}

/** Resolves true once every pid is gone, false if some still live after `ms`. */
export async function allGone(pids, ms = 10_000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (!pids.some(alive)) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}
