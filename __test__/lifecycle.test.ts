// No leftovers: every server process, grandchildren included, is gone after each way a
// load or a source can end. Each fixture server here spawns a long-lived grandchild and
// writes both pids to a file (--grandchild --pids=FILE); "stubborn" ones also ignore
// stdin EOF and SIGTERM, so only a hard kill ends them.
import assert from "node:assert/strict"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import v8 from "node:v8"
import vm from "node:vm"
import { createMcpStore, listMcpTools, loadMcp } from "toolnexus"
import {
  assertCleanExit,
  assertGone,
  FAST,
  isAlive,
  local,
  poll,
  readPids,
  runNode,
  SHORT_TIMEOUT,
  tempDir,
  timed,
  toolNamed,
  toolsFlag,
} from "./helpers.js"

/**
 * Fixture servers with a grandchild each. `pids(...names)` reads what each named server
 * spawned, all before any assertion, so every tree is killed at the end even when a
 * test fails.
 */
function trees(t: TestContext) {
  const dir = tempDir(t)
  const pidFile = (name: string) => path.join(dir, `${name}.pids.json`)
  return {
    entry: (name: string, ...flags: string[]) => local("--grandchild", `--pids=${pidFile(name)}`, ...flags),
    pids: async <N extends string>(...names: N[]): Promise<Record<N, number[]>> => {
      const all = await Promise.all(names.map((name) => readPids(t, pidFile(name))))
      return Object.fromEntries(names.map((name, i) => [name, all[i]])) as Record<N, number[]>
    },
  }
}

const assertAllAlive = (pids: number[], what: string) =>
  assert.deepEqual(
    pids.filter((pid) => !isAlive(pid)),
    [],
    `${what} should still be running`,
  )

describe("no leftovers", { timeout: 90_000 }, () => {
  test("listMcpTools has ended every tree when it settles", async (t) => {
    const tr = trees(t)
    const inv = await listMcpTools({ plain: tr.entry("plain"), stubborn: tr.entry("stubborn", "--stubborn") })
    assert.deepEqual(inv.status, { plain: "connected", stubborn: "connected" })
    const { plain, stubborn } = await tr.pids("plain", "stubborn")
    await assertGone(plain, undefined, "plain server tree")
    await assertGone(stubborn, undefined, "stubborn server tree")
  })

  test("close() ends every tree, stubborn ones included, and can be called again", async (t) => {
    const tr = trees(t)
    const source = await loadMcp({ plain: tr.entry("plain"), stubborn: tr.entry("stubborn", "--stubborn") })
    assert.deepEqual(source.status, { plain: "connected", stubborn: "connected" })
    const { plain, stubborn } = await tr.pids("plain", "stubborn")
    assertAllAlive([...plain, ...stubborn], "before close(), the servers")
    const { ms } = await timed(() => source.close())
    assert.ok(ms < FAST, `close() took ${ms} ms`)
    await assertGone(plain, undefined, "plain server tree")
    await assertGone(stubborn, undefined, "stubborn server tree")
    await source.close()
  })

  test("close() on an empty or all-disabled source resolves, twice", async () => {
    for (const config of [{}, { off: { ...local(), enabled: false } }]) {
      const source = await loadMcp(config)
      assert.deepEqual(source.tools, [])
      await source.close()
      await source.close()
    }
  })

  test("close() also ends the orphaned grandchild of a server that crashed", async (t) => {
    const tr = trees(t)
    const source = await loadMcp({ crashy: tr.entry("crashy") })
    const { crashy } = await tr.pids("crashy")
    const res = await toolNamed(source, "crashy_crash").execute({})
    assert.equal(res.isError, true, res.output)
    await source.close()
    await assertGone(crashy, undefined, "crashed server tree")
  })

  for (const [label, fn] of [
    ["loadMcp", loadMcp],
    ["listMcpTools", listMcpTools],
  ] as const) {
    test(`${label}: an aborted load ends what it spawned`, async (t) => {
      const tr = trees(t)
      const controller = new AbortController()
      const reason = new Error("user gave up")
      const pending = fn(
        { mute: tr.entry("mute", "--hang-list"), stubborn: tr.entry("stubborn", "--hang-list", "--stubborn") },
        { signal: controller.signal },
      ).then(
        () => assert.fail("resolved despite the abort"),
        (err: unknown) => err,
      )
      const { mute, stubborn } = await tr.pids("mute", "stubborn")
      controller.abort(reason)
      assert.equal(await pending, reason)
      await assertGone(mute, undefined, "hanging server tree")
      await assertGone(stubborn, undefined, "stubborn hanging server tree")
    })

    test(`${label}: a server that timed out is ended when the call settles`, async (t) => {
      const tr = trees(t)
      const result = await fn({
        list: { ...tr.entry("list", "--hang-list"), timeout: SHORT_TIMEOUT },
        init: { ...tr.entry("init", "--hang-init", "--stubborn"), timeout: SHORT_TIMEOUT },
        good: tr.entry("good", toolsFlag(["x"])),
      })
      assert.deepEqual(result.status, { list: "failed", init: "failed", good: "connected" })
      const { list, init, good } = await tr.pids("list", "init", "good")
      await assertGone(list, undefined, "server that timed out on tools/list")
      await assertGone(init, undefined, "server that timed out on initialize")
      if ("close" in result) {
        assertAllAlive(good, "the connected server")
        await result.close()
      }
      await assertGone(good, undefined, "connected server tree")
    })
  }
})

describe("a Node process that never calls close()", { timeout: 90_000 }, () => {
  for (const [label, ending] of [
    ["ends on its own", ""],
    ["calls process.exit(0)", "process.exit(0)"],
  ] as const) {
    test(`${label}, and leaves no server behind`, async (t) => {
      const tr = trees(t)
      const config = { plain: tr.entry("plain"), stubborn: tr.entry("stubborn", "--stubborn") }
      const run = await runNode(
        `
        import { loadMcp } from "toolnexus"
        const source = await loadMcp(${JSON.stringify(config)})
        console.log(JSON.stringify(source.status))
        ${ending}
      `,
        { timeout: 20_000 },
      )
      const { plain, stubborn } = await tr.pids("plain", "stubborn").catch((err: Error) => {
        throw new Error(`${err.message}\nchild stdout: ${run.stdout}\nchild stderr: ${run.stderr}`)
      })
      assertCleanExit(run)
      assert.deepEqual(JSON.parse(run.stdout), { plain: "connected", stubborn: "connected" })
      await assertGone(plain, 3_000, "plain server tree")
      await assertGone(stubborn, 3_000, "stubborn server tree")
    })
  }
})

describe("a Node process killed by a signal", { timeout: 60_000 }, () => {
  // No exit hook runs on SIGKILL; the kernel's parent-death signal must end the servers.
  test("takes even a server that ignores stdin EOF and SIGTERM down with it", async (t) => {
    const tr = trees(t)
    const config = { stubborn: tr.entry("stubborn", "--stubborn") }
    const run = await runNode(
      `
      import { loadMcp } from "toolnexus"
      const source = await loadMcp(${JSON.stringify(config)})
      console.log(JSON.stringify(source.status))
      process.kill(process.pid, "SIGKILL")
    `,
      { timeout: 20_000 },
    )
    assert.deepEqual(JSON.parse(run.stdout), { stubborn: "connected" })
    const { stubborn } = await tr.pids("stubborn")
    await assertGone(stubborn.slice(0, 1), 3_000, "the stubborn server")
  })
})

describe("memory", () => {
  // A source's call queue and a store's change listener each hold a JS function through a
  // threadsafe function, which is a GC root: if that function could reach its own handle,
  // no such handle would ever be freed (a leak of every loadMcp, found by the benchmarks'
  // load/close cycles).
  type Live = { sources: number; stores: number }
  /**
   * Runs `cycle` three times, then asserts that GC frees every `kind` handle they made.
   * `cycle` calls `counted()` while it holds its handle, to show that the handle is counted.
   */
  async function assertFreed(kind: keyof Live, cycle: (counted: () => void) => Promise<void>) {
    v8.setFlagsFromString("--expose-gc")
    const gc = vm.runInNewContext("gc") as () => void
    // The native binding's own diagnostic (not public API), imported by URL to stay untyped.
    const { liveHandles } = (await import(new URL("../binding.js", import.meta.url).href)) as { liveHandles(): Live }
    // Earlier tests leave closed handles behind that GC has not freed yet; collect them first,
    // so that `before` counts only handles still referenced. A handle's finalizer runs after
    // the collection that found it unreachable: each check collects, and the next check, a
    // poll later, sees what that collection freed.
    const settle = async () => {
      let last = Infinity
      const steady = () => {
        const now = liveHandles()[kind]
        if (now >= last) return true
        last = now
        gc()
        return false
      }
      assert.ok(await poll(steady, 10_000), `${kind} handles still being freed 10 s on`)
      return liveHandles()[kind]
    }
    const before = await settle()
    // GC may free an earlier cycle's handle at any time, so only "more than before" is sure.
    const counted = () => assert.ok(liveHandles()[kind] > before, `a live ${kind} handle is not counted`)
    for (let i = 0; i < 3; i++) await cycle(counted)
    const freed = () => {
      if (liveHandles()[kind] <= before) return true
      gc()
      return false
    }
    await poll(freed, 10_000)
    assert.ok(liveHandles()[kind] <= before, `${kind} left alive after GC: ${liveHandles()[kind]} > ${before}`)
  }

  // Each cycle is a function of its own, so that no frame of the test still holds a handle.
  test("a closed source that nothing references is freed, native side included", async () => {
    await assertFreed("sources", async (counted) => {
      const source = await loadMcp({ srv: local() })
      counted()
      const result = await toolNamed(source, "srv_echo").execute({ text: "x" })
      assert.equal(result.isError, false, result.output)
      await source.close()
    })
  })

  test("a closed store with change listeners that nothing references is freed", async () => {
    await assertFreed("stores", async (counted) => {
      const store = createMcpStore({ srv: local() })
      counted()
      const versions: number[] = []
      store.onChange((v) => versions.push(v))
      store.forAgent("a").onChange(() => {})
      await store.listToolsAsync()
      await poll(() => versions.length > 0, 5_000)
      assert.ok(versions.length > 0, "the listener was told of the server connecting")
      await store.close()
    })
  })
})
