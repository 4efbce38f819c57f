// Shared utilities for the integration tests: fixture commands, temp files,
// process-liveness checks and a child-Node runner for stderr and exit behaviour.
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import type { TestContext } from "node:test"
import { fileURLToPath } from "node:url"
import { loadMcp, type McpSource, type Tool } from "toolnexus"
import "./isolated-cache.mjs"

import { isAlive } from "./liveness.js"

/** The package root (where `import "toolnexus"` resolves by self-reference). */
export const ROOT = fileURLToPath(new URL("..", import.meta.url))
export const NODE = process.execPath
export const fixture = (name: string) => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url))

/** The default timeout of a server in ms, per the contract; "fast" means well under it. */
export const DEFAULT_TIMEOUT = 30_000
export const FAST = 10_000
/**
 * A server `timeout` short enough to wait out, yet long enough for a fixture server to
 * start (Node plus the SDK import take several hundred ms on a busy machine), so the
 * phase that times out is the one the fixture hangs in.
 */
export const SHORT_TIMEOUT = 3_000

/** The command array of the configurable fixture server (see fixtures/server.mjs for flags). */
export const serverCmd = (...flags: string[]) => [NODE, fixture("server.mjs"), ...flags]

/** A local config entry running the fixture server with `flags`. */
export const local = (...flags: string[]) => ({ command: serverCmd(...flags) })

/** The `--tools=` flag for a custom tool list. */
export const toolsFlag = (tools: Array<string | { name: string; description?: string; inputSchema?: object }>) =>
  `--tools=${JSON.stringify(tools)}`

/** A server that writes one line to stderr and exits with code 3 before answering anything. */
export const exitAtOnce = () => ({ command: [NODE, fixture("exit-at-once.mjs")] })

/** Temp directories a test could not remove, removed again as the test file's process exits. */
const leftovers = new Set<string>()
process.on("exit", () => {
  for (const dir of leftovers) {
    try {
      fs.rmSync(dir, { recursive: true, force: true })
    } catch {
      // Best effort: a folder left in the system's temp folder fails no test.
    }
  }
})

/** A fresh temp directory, removed when the test ends, or else when its file's process exits. */
export function tempDir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-test-"))
  t.after(() => {
    // After-hooks run in the order they were added, so a store or server that a later one
    // closes may still be writing into the folder (ENOTEMPTY): then it goes at exit.
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 })
    } catch {
      leftovers.add(dir)
    }
  })
  return fs.realpathSync(dir)
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 25 ms until it returns a value other than undefined/false, or `ms` pass. */
export async function poll<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  ms: number,
): Promise<T | undefined> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() >= deadline) return undefined
    await sleep(25)
  }
}

/** Runs `fn` and returns its result with the elapsed wall time in ms. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = Date.now()
  const value = await fn()
  return { value, ms: Date.now() - start }
}

// ---------------------------------------------------------------- processes

export { childPids, isAlive } from "./liveness.js"

/** Waits up to `ms` for every pid to be dead; returns the pids still alive (empty when all are gone). */
export async function waitUntilGone(pids: number[], ms: number): Promise<number[]> {
  await poll(() => pids.every((pid) => !isAlive(pid)), ms)
  return pids.filter(isAlive)
}

/** Asserts that every pid is dead within `ms` (default: a short grace for signal delivery). */
export async function assertGone(pids: number[], ms = 2_000, what = "server processes"): Promise<void> {
  const alive = await waitUntilGone(pids, ms)
  assert.deepEqual(alive, [], `${what} still alive ${ms} ms later: ${alive.join(", ")} (of ${pids.join(", ")})`)
}

export interface FixturePids {
  server: number
  grandchild?: number
}

/**
 * The pids a fixture server wrote with `--pids=file` (waits up to `ms` for the file).
 * Every pid read is SIGKILLed when the test ends, so a leak never outlives the test.
 */
export async function readPids(t: TestContext, file: string, ms = 10_000): Promise<number[]> {
  const found = await poll(() => fs.existsSync(file), ms)
  assert.ok(found, `the fixture server never wrote ${file}`)
  const pids: FixturePids = JSON.parse(fs.readFileSync(file, "utf8"))
  const all = [pids.server, ...(pids.grandchild ? [pids.grandchild] : [])]
  t.after(() => {
    for (const pid of all) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
  })
  return all
}

// ---------------------------------------------------------------- call records

export interface CallEvent {
  event: "started" | "cancelled"
  tool?: string
  requestId: string | number
  reason?: string | null
}

/** The events a fixture server appended to `file` as JSON lines (`--record=file` by default). */
export function readRecord<T = CallEvent>(file: string): T[] {
  if (!fs.existsSync(file)) return []
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T)
}

/** Waits up to `ms` for a recorded event matching `match`. */
export function waitForEvent(
  file: string,
  match: (e: CallEvent) => boolean,
  ms = 5_000,
): Promise<CallEvent | undefined> {
  return poll(() => readRecord(file).find(match), ms)
}

// ---------------------------------------------------------------- child Node

export interface NodeRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** true when the child had to be killed after `timeout` ms */
  timedOut: boolean
  ms: number
}

/**
 * Runs `node ...args` in a fresh process, from the package root unless `cwd`, so
 * `import ... from "toolnexus"` resolves. Never rejects: a child still running after
 * `timeout` ms (default 30 s) is SIGKILLed and reported with `timedOut: true`.
 */
export function runProcess(
  args: string[],
  opts: { cwd?: string; timeout?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<NodeRun> {
  const start = Date.now()
  const child = spawn(NODE, args, {
    cwd: opts.cwd ?? ROOT,
    env: opts.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.kill("SIGKILL")
  }, opts.timeout ?? 30_000)
  return new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      const ms = Date.now() - start
      const done = () => {
        clearTimeout(drain)
        resolve({ code, signal, stdout, stderr, timedOut, ms })
      }
      // "close" comes once the pipes are drained too; a leaked grandchild holding them must
      // not stall the test, and a second is ample to read what the child itself wrote.
      const drain = setTimeout(done, 1_000)
      child.on("close", done)
    })
  })
}

/** Runs an ES module `script` in a fresh Node process, as `runProcess` does. */
export const runNode = (script: string, opts: { timeout?: number; env?: NodeJS.ProcessEnv } = {}) =>
  runProcess(["--input-type=module", "-e", script], opts)

/** The lines of `text` containing `needle`. */
export const linesWith = (text: string, needle: string) => text.split("\n").filter((line) => line.includes(needle))

/** The `[toolnexus] MCP server "<name>" failed: ...` lines in `stderr`. */
export const failureLines = (stderr: string, server: string) =>
  linesWith(stderr, `[toolnexus] MCP server "${server}" failed:`)

/** Asserts the child ran to completion with exit code 0, showing its output otherwise. */
export function assertCleanExit(run: NodeRun): void {
  assert.equal(run.timedOut, false, `child Node did not exit on its own\nstdout: ${run.stdout}\nstderr: ${run.stderr}`)
  assert.equal(
    run.code,
    0,
    `child Node exit code ${run.code} (signal ${run.signal})\nstdout: ${run.stdout}\nstderr: ${run.stderr}`,
  )
}

// ---------------------------------------------------------------- toolnexus

/** loadMcp, closing the source when the test ends. */
export async function openSource(
  t: TestContext,
  input: string | object,
  opts?: Parameters<typeof loadMcp>[1],
): Promise<McpSource> {
  const source = await loadMcp(input, opts)
  t.after(() => source.close())
  return source
}

/** The tool named `name`, failing with the names on offer when it is missing. */
export function toolNamed(source: McpSource, name: string): Tool {
  const tool = source.tools.find((x) => x.name === name)
  assert.ok(tool, `no tool ${name}; tools: ${source.tools.map((x) => x.name).join(", ")}`)
  return tool
}

export const names = (source: { tools: Array<{ name: string }> }) => source.tools.map((x) => x.name)
