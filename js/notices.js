// The library's notices: each failure and warning of loadMcp and listMcpTools as one
// `[toolnexus]` line on stderr, so that a program printing nothing of its own still shows
// why a server is missing.
import { safeLine } from "./terminal.js"

export const report = (lines) => {
  for (const line of lines) process.stderr.write(`[toolnexus] ${safeLine(line)}\n`)
}

/**
 * A `listMcpTools` option for a caller that prints every failure itself (`toolnexus list`,
 * whose listing holds each reason): no notice then, so each reason is said once. Not public.
 */
export const PRINTS_FAILURES = Symbol("toolnexus: the caller prints failures")
