// Which processes live, on every OS the package runs on: Linux reads /proc, other Unix
// systems ask `ps`, Windows asks the kernel (`process.kill(pid, 0)`) and PowerShell for
// parents. Where no way works these throw: a check that cannot see processes must never
// pass as "nothing was left behind".
import { execFileSync } from "node:child_process"
import fs from "node:fs"

/** A process as the tests see it: a zombie (exited, not yet reaped) counts as dead. */
export type State = "alive" | "zombie" | "gone"

/** One way of looking at the process table. */
export interface ProcessView {
  /** The state of `pid`. */
  state(pid: number): State
  /** Every live (non-zombie) process, with its parent's pid. */
  parents(): Map<number, number>
}

/** Linux: `/proc/<pid>/stat` is "pid (comm) S ppid ...", and comm may hold spaces or parens. */
export const procfs: ProcessView = {
  state(pid) {
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    } catch {
      return "gone"
    }
    return zombieOrAlive(stat.slice(stat.lastIndexOf(")") + 2))
  },
  parents() {
    const parents = new Map<number, number>()
    for (const entry of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue
      let stat: string
      try {
        stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      } catch {
        continue // gone meanwhile
      }
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (zombieOrAlive(state!) === "alive") parents.set(Number(entry), Number(ppid))
    }
    return parents
  },
}

/** macOS, the BSDs and any other Unix: POSIX `ps` (it exits 1 for a pid it does not know). */
export const ps: ProcessView = {
  state(pid) {
    if (!exists(pid)) return "gone"
    const out = runPs(["-o", "stat=", "-p", String(pid)], true).trim()
    return out === "" ? "gone" : zombieOrAlive(out)
  },
  parents() {
    const parents = new Map<number, number>()
    for (const line of runPs(["-A", "-o", "pid=,ppid=,stat="], false).split("\n")) {
      const [pid, ppid, state] = line.trim().split(/\s+/)
      if (state && zombieOrAlive(state) === "alive") parents.set(Number(pid), Number(ppid))
    }
    if (parents.size === 0) throw new Error("`ps -A` listed no process at all")
    return parents
  },
}

/** Windows: no zombies; the parents come from CIM (there is no `ps`, and `wmic` is gone). */
export const windows: ProcessView = {
  state: (pid) => (exists(pid) ? "alive" : "gone"),
  parents() {
    const script = 'Get-CimInstance Win32_Process | ForEach-Object { "$($_.ProcessId) $($_.ParentProcessId)" }'
    const out = execFileSync("powershell.exe", ["-NoProfile", "-NonInteractive", "-Command", script], {
      encoding: "utf8",
    })
    const parents = new Map<number, number>()
    for (const line of out.split(/\r?\n/)) {
      const [pid, ppid] = line.trim().split(" ")
      if (pid && ppid) parents.set(Number(pid), Number(ppid))
    }
    if (parents.size === 0) throw new Error("Win32_Process listed no process at all")
    return parents
  },
}

/** The view for this OS. */
export const here: ProcessView = process.platform === "linux" ? procfs : process.platform === "win32" ? windows : ps

/** Whether `pid` is a live process. A zombie (exited, not yet reaped) counts as dead. */
export function isAlive(pid: number): boolean {
  return here.state(pid) === "alive"
}

/** The live child processes of this process, for counting what a test leaves behind. */
export function childPids(): number[] {
  return childrenIn(here)
}

/** The live children of this process that `view` sees. */
export function childrenIn(view: ProcessView): number[] {
  return [...view.parents()].filter(([, ppid]) => ppid === process.pid).map(([pid]) => pid)
}

/** Signal 0 asks the kernel whether the pid exists (EPERM: it does, but is not ours). */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ESRCH") return false
    if ((e as NodeJS.ErrnoException).code === "EPERM") return true
    throw e
  }
}

/** The first letter of a state column: Z (zombie) and X (dead) are not alive. */
function zombieOrAlive(state: string): State {
  return state.startsWith("Z") || state.startsWith("X") ? "zombie" : "alive"
}

/** Runs `ps`; with `unknownIsEmpty`, its "no such process" exit (1, nothing printed) is "". */
function runPs(args: string[], unknownIsEmpty: boolean): string {
  try {
    return execFileSync("ps", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  } catch (e) {
    const failed = e as { status?: number; stdout?: string; code?: string }
    if (unknownIsEmpty && failed.status === 1 && !failed.stdout?.trim()) return ""
    throw new Error(`cannot tell which processes live: ps ${args.join(" ")} failed`, { cause: e })
  }
}
