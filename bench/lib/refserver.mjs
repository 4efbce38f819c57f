// Where the reference server binary is, and how to start it.

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
