// The liveness checks every "no process left behind" test relies on. Linux, where /proc
// is the reference, also runs the `ps` view that macOS and the other Unix systems use, so
// a view that would answer "gone" for everything fails here first.
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { describe, it, type TestContext } from "node:test"

import { childrenIn, procfs, ps, type ProcessView } from "./liveness.js"

const unix = process.platform !== "win32"
const views: Array<[string, ProcessView]> = [
  ...(process.platform === "linux" ? [["/proc", procfs] as [string, ProcessView]] : []),
  ...(unix ? [["ps", ps] as [string, ProcessView]] : []),
]

/** Polls `check` until it holds or `ms` pass (helpers.ts has one too, but loads the addon). */
async function poll(check: () => boolean, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 25))) {
    if (Date.now() > deadline) return false
  }
  return true
}

/** A child `sleep` whose own child exited unreaped: `{ parent, zombie }`. */
async function zombieParent(t: TestContext): Promise<{ parent: number; zombie: number }> {
  // The shell starts a short `sleep` in the background, then becomes a long one, which
  // never reaps it. The short one outlives the shell's `exec`: a shell may reap a
  // background job that already ended before it execs, and then there is no zombie.
  const child = spawn("sh", ["-c", "sleep 0.3 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "inherit"] })
  t.after(() => child.kill("SIGKILL"))
  const [line] = (await once(child.stdout!, "data")) as [Buffer]
  return { parent: child.pid!, zombie: Number(line.toString().trim()) }
}

describe("liveness checks", { skip: !unix && "Windows has its own view" }, () => {
  for (const [name, view] of views) {
    it(`${name}: a live child is alive and listed, a zombie is dead, a reaped pid is gone`, async (t) => {
      const { parent, zombie } = await zombieParent(t)
      assert.equal(view.state(parent), "alive")
      assert.ok(childrenIn(view).includes(parent), `${name} does not list the child ${parent}`)
      const zombied = await poll(() => view.state(zombie) === "zombie", 5_000)
      assert.ok(zombied, `${name} says ${view.state(zombie)} for the unreaped ${zombie}`)
      assert.ok(!childrenIn(view).includes(zombie))
      process.kill(parent, "SIGKILL")
      // Once its parent is gone, init reaps the zombie.
      const gone = await poll(() => view.state(parent) === "gone" && view.state(zombie) === "gone", 5_000)
      assert.ok(gone, `${name}: parent ${view.state(parent)}, zombie ${view.state(zombie)}`)
      assert.ok(!childrenIn(view).includes(parent))
    })
  }

  it("ps: fails loudly, not vacuously, when it cannot run", () => {
    const path = process.env.PATH
    process.env.PATH = "/nonexistent"
    try {
      assert.throws(() => ps.parents(), /cannot tell which processes live/)
      assert.throws(() => ps.state(process.pid), /cannot tell which processes live/)
    } finally {
      process.env.PATH = path
    }
  })
})
