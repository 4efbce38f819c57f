// What this process holds, read from /proc (Linux): open descriptors, threads, and the
// process tree below it, zombies included. The soak run samples these.

import { readFileSync, readdirSync } from "node:fs"

/** Open file descriptors of this process (the listing's own descriptor left out). */
export const openFds = () => readdirSync("/proc/self/fd").length - 1

/** Threads of this process, as /proc/self/status counts them. */
export const threadCount = () => Number(/^Threads:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1])

/** Every process below this one: `{ pid, state, name }`, state "Z" for a zombie. */
export function descendants() {
  const children = new Map()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let stat
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue // it ended while we looked
    }
    // "pid (name) state ppid ...": the name may hold spaces and parentheses.
    const close = stat.lastIndexOf(")")
    const [state, ppid] = stat.slice(close + 2).split(" ")
    const proc = { pid: Number(entry), state, name: stat.slice(stat.indexOf("(") + 1, close) }
    const siblings = children.get(Number(ppid)) ?? []
    siblings.push(proc)
    children.set(Number(ppid), siblings)
  }
  const found = []
  const queue = [process.pid]
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()) ?? []) {
      found.push(child)
      queue.push(child.pid)
    }
  }
  return found
}
