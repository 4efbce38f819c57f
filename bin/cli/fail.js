// A usage or config error: said on stderr, terminal-safe, exit code 2.
import { safeBlock } from "../../js/terminal.js"

export function fail(message) {
  console.error(safeBlock(message))
  return 2
}
