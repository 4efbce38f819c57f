// Where the reference server binary is, and how to start it.

import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import path from "node:path"

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))

export function refserverPath() {
  const fromEnv = process.env.TOOLNEXUS_REFSERVER
  const candidates = fromEnv
    ? [fromEnv]
    : [
        path.join(repoRoot, "target/release/toolnexus-refserver"),
        path.join(repoRoot, "target/release/toolnexus-refserver.exe"),
      ]
  const found = candidates.find((p) => existsSync(p))
  if (!found) {
    throw new Error(
      `toolnexus-refserver not found (looked for ${candidates.join(", ")}); ` +
        "build it with: cargo build --release -p toolnexus-refserver",
    )
  }
  return found
}

/** The command line of a reference server: `{ tools, pageSize }` become flags. */
export function serverCommand(bin, { tools, pageSize } = {}) {
  const command = [bin]
  if (tools !== undefined) command.push("--tools", String(tools))
  if (pageSize !== undefined) command.push("--page-size", String(pageSize))
  return command
}

/** Starts the reference server in HTTP mode; resolves { url, pid, close() } once it listens. */
export function startHttpServer(bin, options) {
  const child = spawn(bin, [...serverCommand(bin, options).slice(1), "--http"], {
    stdio: ["pipe", "pipe", "inherit"],
  })
  const exited = new Promise((resolve) => child.once("exit", resolve))
  const close = async () => {
    child.stdin.end() // the server exits when its stdin closes
    await exited
  }
  return new Promise((resolve, reject) => {
    let text = ""
    child.once("error", reject)
    exited.then((code) => reject(new Error(`toolnexus-refserver --http exited (${code}) before listening`)))
    child.stdout.on("data", (chunk) => {
      text += chunk
      const line = text.split("\n")
      if (line.length > 1) resolve({ url: line[0].trim(), pid: child.pid, close })
    })
  })
}
