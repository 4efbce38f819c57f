// The watchdog that keeps the host-death promise where no parent-death signal exists
// (macOS, the BSDs): a Node host killed by SIGKILL, which runs no exit hook, still takes
// every server tree down, grandchildren included. On Linux the watchdog runs only when
// TOOLNEXUS_HOST_DEATH=watchdog, which also turns the parent-death signal off, so what
// ends the servers here is the watchdog alone.
import assert from "node:assert/strict"
import path from "node:path"
import { describe, test } from "node:test"

import { assertGone, local, readPids, runNode, tempDir } from "./helpers.js"

describe(
  "a Node host killed by a signal, kept by its watchdog",
  { skip: process.platform === "win32", timeout: 60_000 },
  () => {
    test("takes every server and its grandchild down, even a server deaf to stdin EOF and SIGTERM", async (t) => {
      const dir = tempDir(t)
      const pids = (name: string) => path.join(dir, `${name}.pids.json`)
      const config = {
        stubborn: local("--grandchild", `--pids=${pids("stubborn")}`, "--stubborn"),
        plain: local("--grandchild", `--pids=${pids("plain")}`),
      }
      const run = await runNode(
        `
      import { loadMcp } from "toolnexus"
      const source = await loadMcp(${JSON.stringify(config)})
      console.log(JSON.stringify(source.status))
      process.kill(process.pid, "SIGKILL")
    `,
        { timeout: 20_000, env: { ...process.env, TOOLNEXUS_HOST_DEATH: "watchdog" } },
      )
      assert.equal(run.signal, "SIGKILL")
      assert.deepEqual(JSON.parse(run.stdout), { stubborn: "connected", plain: "connected" })
      const trees = [...(await readPids(t, pids("stubborn"))), ...(await readPids(t, pids("plain")))]
      assert.equal(trees.length, 4, "two servers with a grandchild each")
      await assertGone(trees, 3_000, "the servers and their grandchildren")
    })
  },
)
