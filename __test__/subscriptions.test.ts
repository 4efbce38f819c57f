// Resource subscriptions of loadMcp's source and of store views, against servers written
// with the official SDKs: v1 (2025 era: resources/subscribe, notifications/resources/
// updated, resources/unsubscribe) and v2 (2026-07-28: subscriptions/listen with the URI in
// its filter), over stdio and HTTP. An update reaches each subscriber as `{ server, uri }`,
// unsubscribing stops it (twice is harmless), a store's subscription outlives a restart
// and follows its name to a replaced or re-added server,
// a flood is coalesced, a throwing callback is harmless, and a server without the
// capability is refused by name.
import assert from "node:assert/strict"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { after, before, describe, test, type TestContext } from "node:test"
import { createMcpStore, loadMcp, type McpStoreView, type ServerConfig } from "toolnexus"
import { COUNTER, SECRET, startSubscribeV1Http } from "./fixtures/subscribe-v1.mjs"
import { startSubscribeV2Http } from "./fixtures/subscribe-v2.mjs"
import { fixture, NODE, openSource, poll, runNode, tempDir, toolNamed } from "./helpers.js"

type Update = { server: string; uri: string; [key: string]: unknown }

const v1 = (...flags: string[]) => ({
  command: [NODE, fixture("subscribe-v1.mjs"), ...flags],
  env: { SUB_TOKEN: SECRET },
})
// Pinned: on a loaded machine a stdio server slow to answer `server/discover` is taken
// for a 2025-era one, and SDK v2 serves it that era, which has no subscriptions here.
const v2 = (...flags: string[]) => ({
  command: [NODE, fixture("subscribe-v2.mjs"), ...flags],
  protocol: "2026-07-28" as const,
})

let v1Http: Awaited<ReturnType<typeof startSubscribeV1Http>>
let v2Http: Awaited<ReturnType<typeof startSubscribeV2Http>>
before(async () => {
  ;[v1Http, v2Http] = await Promise.all([startSubscribeV1Http(), startSubscribeV2Http()])
})
after(() => Promise.all([v1Http.close(), v2Http.close()]))

/** Collects the updates a subscriber gets. */
function collector() {
  const updates: Update[] = []
  return {
    updates,
    onUpdate: (update: Update) => void updates.push(update),
    /** Resolves once `n` updates came (bounded: a loaded machine may be slow). */
    async waitFor(n: number) {
      assert.ok(await poll(() => updates.length >= n, 20_000), `${updates.length} of ${n} updates came`)
    },
  }
}

/**
 * Bumps the counter through `view`, one call after another, until `c` has more than `before`
 * updates: a new session subscribes on its own, and only an update shows that it has.
 */
async function bumpUntilHeard(view: McpStoreView, c: ReturnType<typeof collector>, before: number) {
  for (const deadline = Date.now() + 20_000; c.updates.length <= before && Date.now() < deadline;)
    await view.callTool("sub_bump", {})
  assert.ok(c.updates.length > before, `no update after ${before}`)
}

const eras: Array<[string, () => ServerConfig, boolean]> = [
  ["stdio, 2025-11-25, SDK v1", () => v1(), true],
  ["HTTP, 2025-11-25, SDK v1", () => ({ url: v1Http.url, headers: { "x-token": SECRET } }), true],
  ["stdio, 2026-07-28, SDK v2", () => v2(), false],
  ["HTTP, 2026-07-28, SDK v2", () => ({ url: v2Http.url, protocol: "2026-07-28" }), false],
]

/** The subscribe/unsubscribe requests the v1 server saw, through its `events` tool. */
async function seen(call: (name: string, args: Record<string, unknown>) => Promise<{ output: string }>) {
  return JSON.parse((await call("events", {})).output) as Array<[string, string]>
}

/** Connected store with `sub` of `server`, closed when the test ends. */
async function openStore(t: TestContext, server: ServerConfig, opts?: Parameters<typeof createMcpStore>[1]) {
  const store = createMcpStore({ sub: server }, { catalog: false, ...opts })
  t.after(() => store.close())
  const up = () => Object.values(store.status()).every((s) => s.state === "connected")
  assert.ok(await poll(up, 20_000), JSON.stringify(store.status()))
  return store
}

for (const [era, server, legacy] of eras) {
  describe(`resource subscriptions (${era})`, () => {
    test("loadMcp: updates reach the subscriber until it unsubscribes", async (t) => {
      const source = await openSource(t, { sub: server() })
      const call = async (name: string, args: Record<string, unknown>) =>
        await toolNamed(source, `sub_${name}`).execute(args)
      const [a, b] = [collector(), collector()]
      const unsubscribe = await source.subscribeResource("sub", COUNTER, a.onUpdate)
      const keep = await source.subscribeResource("sub", "other://x", b.onUpdate)
      await call("bump", {})
      await a.waitFor(1)
      assert.deepEqual(a.updates, [{ server: "sub", uri: COUNTER }])
      await unsubscribe()
      await unsubscribe()
      if (legacy) assert.deepEqual((await seen(call)).at(-1), ["unsubscribe", COUNTER])
      // The kept subscriber's update comes after the one the first would have had.
      await call("bump", {})
      await call("bump", { uri: "other://x" })
      await b.waitFor(1)
      assert.deepEqual(b.updates, [{ server: "sub", uri: "other://x" }])
      assert.equal(a.updates.length, 1)
      await keep()
      // Contents are the server's data, as sent; failures reject naming the server, its
      // secrets hidden.
      if (legacy) {
        const [note] = (await source.readResource("sub", COUNTER)).contents
        assert.equal(note.text, `counter \u001b[31m${SECRET}`)
        await assert.rejects(source.subscribeResource("sub", `missing://${SECRET}`, a.onUpdate), (e: Error) => {
          assert.match(e.message, /^MCP server "sub" /)
          assert.ok(!e.message.includes(SECRET), e.message)
          return true
        })
      }
      await assert.rejects(source.subscribeResource("nope", COUNTER, a.onUpdate), /no connected MCP server "nope"/)
    })

    test("a store view: updates until unsubscribed; listResources follows list changes", async (t) => {
      const store = await openStore(t, server())
      const call = (name: string, args: Record<string, unknown>) => store.callTool(`sub_${name}`, args)
      const c = collector()
      const unsubscribe = await store.subscribeResource("sub", COUNTER, c.onUpdate)
      await call("bump", {})
      await c.waitFor(1)
      assert.deepEqual(c.updates, [{ server: "sub", uri: COUNTER }])
      await unsubscribe()
      await unsubscribe()
      if (legacy) assert.deepEqual((await seen(call)).at(-1), ["unsubscribe", COUNTER])

      const uris = async () => (await store.listResources("sub")).map((r) => r.uri)
      assert.deepEqual(await uris(), [COUNTER])
      const name = `n${Math.random().toString(36).slice(2, 8)}`
      await call("add", { name })
      assert.ok((await uris()).includes(`extra://${name}`))
    })

    test("a server without resources.subscribe is refused by name", async (t) => {
      const bare = legacy ? v1("--no-subscribe") : v2("--no-subscribe")
      const source = await openSource(t, { bare })
      await assert.rejects(
        source.subscribeResource("bare", COUNTER, () => {}),
        /^Error: MCP server "bare" offers no resource subscriptions/,
      )
    })
  })
}

describe("resource subscriptions, whatever the era", () => {
  for (const [era, server] of [
    ["2025-11-25", v1],
    ["2026-07-28", v2],
  ] as const) {
    test(`a store's subscription outlives a restart of its server (${era})`, async (t) => {
      const store = await openStore(t, server(), { backoffMs: 50 })
      const c = collector()
      const unsubscribe = await store.subscribeResource("sub", COUNTER, c.onUpdate)
      await store.callTool("sub_crash", {})
      const restarted = () => store.status().sub?.state === "connected" && store.status().sub.restarts === 1
      assert.ok(await poll(restarted, 20_000), JSON.stringify(store.status()))
      await bumpUntilHeard(store, c, 0)
      assert.deepEqual(c.updates[0], { server: "sub", uri: COUNTER })
      await unsubscribe()
    })

    test(`a store's subscription follows its name: a replaced server, a removed one added again (${era})`, async (t) => {
      const store = await openStore(t, server())
      const c = collector()
      const unsubscribe = await store.subscribeResource("sub", COUNTER, c.onUpdate)
      const connected = () => store.status().sub?.state === "connected"
      const entry: ServerConfig = server()
      store.updateServer("sub", { ...entry, env: { ...entry.env, REPLACED: "1" } })
      assert.ok(await poll(connected, 20_000), JSON.stringify(store.status()))
      await bumpUntilHeard(store, c, 0)
      assert.equal(store.removeServer("sub"), true)
      store.addServers({ sub: server() })
      assert.ok(await poll(connected, 20_000), JSON.stringify(store.status()))
      await bumpUntilHeard(store, c, c.updates.length)
      assert.deepEqual(c.updates.at(-1), { server: "sub", uri: COUNTER })
      await unsubscribe()
    })

    test(`a throwing or rejecting callback harms nothing (${era})`, async (t) => {
      const source = await openSource(t, { sub: server() })
      let calls = 0
      await source.subscribeResource("sub", COUNTER, () => {
        calls++
        throw new Error("the callback broke")
      })
      const c = collector()
      await source.subscribeResource("sub", COUNTER, async (update) => {
        c.onUpdate(update)
        throw new Error("the async callback broke")
      })
      const bump = toolNamed(source, "sub_bump")
      await bump.execute({})
      await c.waitFor(1)
      await bump.execute({})
      await c.waitFor(2)
      assert.ok(await poll(() => calls === 2, 20_000), `${calls} calls`)
    })
  }

  test("close() ends every subscription; unsubscribing afterwards is harmless", async () => {
    const source = await loadMcp({ sub: v1(), mod: v2() })
    const a = await source.subscribeResource("sub", COUNTER, () => {})
    const b = await source.subscribeResource("mod", COUNTER, () => {})
    const store = createMcpStore({ sub: v1() }, { catalog: false })
    assert.ok(await poll(() => store.status().sub?.state === "connected", 20_000))
    const s = await store.subscribeResource("sub", COUNTER, () => {})
    await Promise.all([source.close(), store.close()])
    await Promise.all([a(), b(), s(), a()])
  })

  test("a subscription keeps the host's process alive until it ends; close() lets the process exit", async () => {
    // The update is caused by an unref'd timer: only the subscription keeps the process
    // waiting for it. The second subscription is never unsubscribed; close() ends it.
    const config = JSON.stringify({ sub: v1() })
    const run = await runNode(`
      import { loadMcp } from "toolnexus"
      const source = await loadMcp(${config})
      const updated = new Promise((resolve) => source.subscribeResource("sub", ${JSON.stringify(COUNTER)}, resolve))
      await source.subscribeResource("sub", ${JSON.stringify(COUNTER)}, () => {})
      const bump = source.tools.find((t) => t.name === "sub_bump")
      setTimeout(() => bump.execute({}), 300).unref()
      console.log(JSON.stringify(await updated))
      await source.close()
    `)
    assert.equal(run.timedOut, false, "the process did not exit after close()")
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(JSON.parse(run.stdout), { server: "sub", uri: COUNTER })
  })

  for (const [era, server] of [
    ["2025-11-25", v1],
    ["2026-07-28", v2],
  ] as const) {
    test(`a flood of updates is coalesced: the latest always comes, no queue grows (${era})`, async (t) => {
      const done = join(tempDir(t), "done")
      const source = await openSource(t, { sub: server(`--done=${done}`) })
      const seqs: number[] = []
      await source.subscribeResource("sub", COUNTER, (update) => {
        // The first update holds the JS thread until the server has sent all of them.
        if (seqs.length === 0) while (!existsSync(done)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5)
        seqs.push((update._meta as { seq: number }).seq)
      })
      const count = 500
      await toolNamed(source, "sub_flood").execute({ count })
      assert.ok(await poll(() => seqs.at(-1) === count, 20_000), `last ${seqs.at(-1)}`)
      assert.ok(seqs.length < count, `${seqs.length} of ${count} delivered: nothing was coalesced`)
      assert.deepEqual(
        seqs,
        [...seqs].sort((x, y) => x - y),
      )
    })
  }

  test("a flood past the 2026-07-28 stream's buffer: the subscriber hears of a change, the subscription goes on", async (t) => {
    const done = join(tempDir(t), "done")
    const source = await openSource(t, { sub: v2(`--done=${done}`) })
    const updates: Update[] = []
    await source.subscribeResource("sub", COUNTER, (update) => {
      if (updates.length === 0)
        while (!existsSync(done)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5)
      updates.push(update)
    })
    await toolNamed(source, "sub_flood").execute({ count: 3000 })
    await toolNamed(source, "sub_bump").execute({ uri: COUNTER })
    // The bump's update (no `_meta`) comes last, on the stream opened again.
    assert.ok(await poll(() => updates.length > 1 && !updates.at(-1)?._meta, 20_000), JSON.stringify(updates.at(-1)))
    assert.ok(updates.length < 3000, `${updates.length} delivered`)
    const before = updates.length
    await toolNamed(source, "sub_bump").execute({ uri: COUNTER })
    assert.ok(await poll(() => updates.length > before, 20_000), "the subscription ended")
  })

  test("an agent's view subscribes under its own names", async (t) => {
    const store = createMcpStore({}, { catalog: false })
    t.after(() => store.close())
    const agent: McpStoreView = store.forAgent("a1")
    agent.addServers({ mine: v1() })
    assert.ok(await poll(() => agent.status().mine?.state === "connected", 20_000), JSON.stringify(agent.status()))
    const c = collector()
    const unsubscribe = await agent.subscribeResource("mine", COUNTER, c.onUpdate)
    await agent.callTool("mine_bump", {})
    await c.waitFor(1)
    assert.deepEqual(c.updates, [{ server: "mine", uri: COUNTER }])
    await unsubscribe()
    await assert.rejects(
      store.forAgent("a2").subscribeResource("mine", COUNTER, () => {}),
      /no MCP server "mine"/,
    )
  })
})
