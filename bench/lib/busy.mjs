// The loaded half of every scenario: a child process spinning on one core, as other work
// on the machine would. It is killed when the pass ends, when the bench fails, and when
// the bench exits (a dying bench also closes its stdin, on which the spinner ends itself).

import { spawn } from "node:child_process"

const SPIN = `process.stdin.on("end", () => process.exit(0)); process.stdin.resume();
const spin = () => { const end = Date.now() + 50; while (Date.now() < end); setImmediate(spin) }; spin()`

let current

export function startBusyLoop() {
  stopBusyLoop()
  current = spawn(process.execPath, ["-e", SPIN], { stdio: ["pipe", "ignore", "inherit"] })
  current.stdin.on("error", () => {})
  return current.pid
}

export function stopBusyLoop() {
  if (!current) return
  current.kill("SIGKILL")
  current = undefined
}

process.on("exit", stopBusyLoop)
