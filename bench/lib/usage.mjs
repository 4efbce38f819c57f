// CPU time and context switches of the bench process and of the servers it runs, so a
// figure per call can sit next to latency: a client that busy-waits shows up here.
//
// The bench's own: process.cpuUsage() and process.resourceUsage() (every thread). The
// servers': /proc/<pid>/task/*/schedstat (nanoseconds on CPU) and the voluntary context
// switches in /proc/<pid>/task/*/status, for every child of this process but the ones
// named in `exclude` (the busy loop), plus any pid handed over (an HTTP server). On
// other systems the server figures are absent.

import { readFileSync, readdirSync } from "node:fs"

function readOr(file, fallback) {
  try {
    return readFileSync(file, "utf8")
  } catch {
    return fallback
  }
}

function tasks(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`)
  } catch {
    return []
  }
}

/** The pids of this process's children (every thread can be a parent: tokio spawns too). */
export function childPids() {
  const pids = new Set()
  for (const task of tasks("self")) {
    for (const pid of readOr(`/proc/self/task/${task}/children`, "").split(" ")) if (pid) pids.add(Number(pid))
  }
  return pids
}

/** CPU ns and voluntary context switches of `pid`, all threads; undefined once it is gone. */
function processUsage(pid) {
  let cpuNs = 0
  let switches = 0
  let seen = false
  for (const task of tasks(pid)) {
    const schedstat = readOr(`/proc/${pid}/task/${task}/schedstat`, "")
    if (!schedstat) continue
    seen = true
    cpuNs += Number(schedstat.split(" ")[0])
    switches += Number(
      /^voluntary_ctxt_switches:\s+(\d+)/m.exec(readOr(`/proc/${pid}/task/${task}/status`, ""))?.[1] ?? 0,
    )
  }
  return seen ? { cpuNs, switches } : undefined
}

/**
 * A snapshot; `usageSince(before)` gives the CPU µs and voluntary switches since, of the
 * bench and of the servers alive at both ends.
 */
export function snapshot({ exclude = [], extraPids = [] } = {}) {
  const servers = new Map()
  for (const pid of [...childPids(), ...extraPids]) {
    if (exclude.includes(pid)) continue
    const usage = processUsage(pid)
    if (usage) servers.set(pid, usage)
  }
  const { user, system } = process.cpuUsage()
  return { cpuUs: user + system, switches: process.resourceUsage().voluntaryContextSwitches, servers }
}

export function usageSince(before, options) {
  const after = snapshot(options)
  let serverCpuNs = 0
  let serverSwitches = 0
  let measured = false
  for (const [pid, end] of after.servers) {
    const start = before.servers.get(pid)
    if (!start) continue
    measured = true
    serverCpuNs += end.cpuNs - start.cpuNs
    serverSwitches += end.switches - start.switches
  }
  return {
    clientCpuUs: after.cpuUs - before.cpuUs,
    clientSwitches: after.switches - before.switches,
    serverCpuUs: measured ? serverCpuNs / 1000 : NaN,
    serverSwitches: measured ? serverSwitches : NaN,
  }
}
