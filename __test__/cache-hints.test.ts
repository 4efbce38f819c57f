// SEP-2549 cache hints: a listing or read whose result carries a positive `ttlMs` is kept
// in memory (per session) for that long and a repeat is answered from it, unless the
// call's `cacheMode` says "refresh" (ask, keep) or "bypass" (ask, keep nothing); a
// `public` answer is also shared through the fleet's state, a `private` one never.
// Served by a hand-written 2026-07-28 HTTP server (fixtures/cache-server.mjs) that counts
// every request it is asked, so "answered from memory" is "the server saw no request".
import assert from "node:assert/strict"
import { describe, test, type TestContext } from "node:test"
import {
  createMcpStore,
  loadMcp,
  type CacheOptions,
  type McpOffers,
  type McpSource,
  type McpStore,
  type ResourceUpdate,
} from "toolnexus"
import { SHORT_TTL, startCacheServer, type CacheServer, type Hints } from "./fixtures/cache-server.mjs"
import { poll, tempDir } from "./helpers.js"
import { startRedis, type Redis } from "./redis.js"

const T = { timeout: 60_000 }
const NAME = "mem"
const READ = "resources/read"

/** The text of `uri` as `offers` reads it with `cacheMode`. */
async function text(offers: McpOffers, uri: string, cacheMode?: CacheOptions["cacheMode"]) {
  const result = await offers.readResource(NAME, uri, cacheMode && { cacheMode })
  return result.contents[0]?.text
}

/** The descriptions a listing's entries carry (each says the server's version). */
const versions = (entries: Array<{ description?: string }>) => entries.map((e) => e.description)

/** A cache server, closed when the test ends (after what `close` is given, in that order). */
async function serve(t: TestContext, lists?: Record<string, Hints>) {
  const server = await startCacheServer({ lists })
  const clients: Array<{ close(): unknown }> = []
  t.after(async () => {
    for (const client of clients) await client.close()
    await server.close()
  })
  return { server, closing: <C extends { close(): unknown }>(client: C) => (clients.push(client), client) }
}

/** loadMcp of a cache server (with `lists`) as NAME, connected, closed before the server. */
async function open(
  t: TestContext,
  lists?: Record<string, Hints>,
): Promise<{ server: CacheServer; source: McpSource }> {
  const { server, closing } = await serve(t, lists)
  const source = closing(await loadMcp({ [NAME]: { url: server.url } }))
  assert.deepEqual(source.status, { [NAME]: "connected" })
  return { server, source }
}

/** A store (on `state`, if given) with `entry` as NAME, once it is connected. */
async function openStore(t: TestContext, entry: object, state?: string): Promise<McpStore> {
  const store = createMcpStore({ [NAME]: entry }, { catalogDir: tempDir(t), ...(state && { state }) })
  const up = await poll(() => store.status()[NAME]?.state === "connected", 20_000)
  if (!up) {
    await store.close()
    assert.fail(`the store did not connect: ${JSON.stringify(store.status())}`)
  }
  return store
}

/** Asserts that `work` rejects with `code`. */
async function rejectsWith(work: () => Promise<unknown>, code: string) {
  await assert.rejects(work, (error: Error & { code?: string }) => {
    assert.ok(error instanceof Error, `an Error, got ${String(error)}`)
    assert.equal(error.code, code, error.message)
    return true
  })
}

// ---------------------------------------------------------------- one session

describe("kept reads", () => {
  test("a repeat read of a ttl'd resource sends one request", T, async (t) => {
    // Shows: the second read is answered from memory, with the same contents.
    const { server, source } = await open(t)
    assert.equal(await text(source, "mem://public"), "mem://public v1")
    assert.equal(await text(source, "mem://public"), "mem://public v1")
    assert.equal(await text(source, "mem://private", "use"), "mem://private v1")
    assert.equal(await text(source, "mem://private"), "mem://private v1")
    assert.equal(server.asked(READ, "mem://public"), 1)
    assert.equal(server.asked(READ, "mem://private"), 1)
  })

  test('"use" keeps the old contents after a change; "refresh" asks and keeps the new', T, async (t) => {
    // Shows: refresh replaces what is kept, and the next "use" answers with it.
    const { server, source } = await open(t)
    assert.equal(await text(source, "mem://public"), "mem://public v1")
    server.bump()
    assert.equal(await text(source, "mem://public", "use"), "mem://public v1")
    assert.equal(server.asked(READ, "mem://public"), 1)
    assert.equal(await text(source, "mem://public", "refresh"), "mem://public v2")
    assert.equal(server.asked(READ, "mem://public"), 2)
    assert.equal(await text(source, "mem://public", "use"), "mem://public v2")
    assert.equal(server.asked(READ, "mem://public"), 2)
  })

  test('"bypass" asks every time and replaces nothing kept', T, async (t) => {
    // Shows: bypass answers fresh, yet the next "use" still gets the answer kept before it.
    const { server, source } = await open(t)
    assert.equal(await text(source, "mem://public"), "mem://public v1")
    server.bump()
    assert.equal(await text(source, "mem://public", "bypass"), "mem://public v2")
    assert.equal(await text(source, "mem://public", "bypass"), "mem://public v2")
    assert.equal(server.asked(READ, "mem://public"), 3)
    assert.equal(await text(source, "mem://public"), "mem://public v1")
    assert.equal(server.asked(READ, "mem://public"), 3)
  })

  test('"bypass" keeps nothing when nothing was kept', T, async (t) => {
    // Shows: a bypassed answer is not kept, so the following "use" asks.
    const { server, source } = await open(t)
    await text(source, "mem://private", "bypass")
    await text(source, "mem://private")
    assert.equal(server.asked(READ, "mem://private"), 2)
    await text(source, "mem://private")
    assert.equal(server.asked(READ, "mem://private"), 2)
  })

  test("a read without ttlMs asks every time", T, async (t) => {
    // Shows: no ttlMs, nothing kept.
    const { server, source } = await open(t)
    for (let i = 0; i < 3; i++) await text(source, "mem://nottl")
    assert.equal(server.asked(READ, "mem://nottl"), 3)
  })

  test("a short ttl expires", T, async (t) => {
    // Shows: a kept answer serves only for its ttl, then the server is asked again.
    const { server, source } = await open(t)
    assert.equal(await text(source, "mem://short"), "mem://short v1")
    server.bump()
    assert.equal(await text(source, "mem://short"), "mem://short v1")
    assert.equal(server.asked(READ, "mem://short"), 1)
    // Expiry is on the clock: the answer was kept (its ttl started) before the first read
    // resolved, so SHORT_TTL from now is past it; the 20 ms cover a timer firing a little
    // early. Nothing else can make it stale.
    await new Promise((resolve) => setTimeout(resolve, SHORT_TTL + 20))
    assert.equal(await text(source, "mem://short"), "mem://short v2")
    assert.equal(server.asked(READ, "mem://short"), 2)
  })

  test("the ttl is per URI: reading one kept resource asks nothing of another", T, async (t) => {
    // Shows: what is kept is keyed by URI (a kept read answers no other URI).
    const { server, source } = await open(t)
    await text(source, "mem://public")
    assert.equal(await text(source, "mem://private"), "mem://private v1")
    assert.equal(server.asked(READ, "mem://private"), 1)
  })
})

describe("kept listings", () => {
  test("resources (every page), templates and prompts are kept by their first page's ttl", T, async (t) => {
    // Shows: a repeat of each listing asks nothing, and the kept resource listing is whole.
    const { server, source } = await open(t)
    const resources = await source.listResources(NAME)
    assert.deepEqual(
      resources.map((r) => r.uri),
      ["mem://public", "mem://private", "mem://nottl", "mem://short"],
    )
    assert.equal(server.asked("resources/list"), 2, "two pages")
    assert.deepEqual(await source.listResources(NAME), resources)
    assert.deepEqual(await source.listResources(), resources)
    assert.equal(server.asked("resources/list"), 2)

    const templates = await source.listResourceTemplates(NAME)
    assert.deepEqual(await source.listResourceTemplates(NAME, { cacheMode: "use" }), templates)
    assert.equal(server.asked("resources/templates/list"), 1)

    const prompts = await source.listPrompts(NAME)
    assert.deepEqual(
      prompts.map((p) => p.name),
      ["greet"],
    )
    assert.deepEqual(await source.listPrompts(), prompts)
    assert.equal(server.asked("prompts/list"), 1)
  })

  test('listings follow cacheMode: "use" old, "refresh" new and kept, "bypass" new and not kept', T, async (t) => {
    // Shows: each listing honours the three modes as reads do.
    const { server, source } = await open(t)
    await source.listResources(NAME)
    await source.listResourceTemplates(NAME)
    await source.listPrompts(NAME)
    server.bump()
    const listings = [
      ["resources/list", (o?: CacheOptions) => source.listResources(NAME, o), 2],
      ["resources/templates/list", (o?: CacheOptions) => source.listResourceTemplates(NAME, o), 1],
      ["prompts/list", (o?: CacheOptions) => source.listPrompts(NAME, o), 1],
    ] as const
    for (const [method, list, pages] of listings) {
      assert.equal(versions(await list()).at(0), "v1", `${method}: use`)
      assert.equal(versions(await list({ cacheMode: "bypass" })).at(0), "v2", `${method}: bypass`)
      assert.equal(versions(await list()).at(0), "v1", `${method}: use after bypass`)
      assert.equal(server.asked(method), 2 * pages, `${method}: asked once more`)
      assert.equal(versions(await list({ cacheMode: "refresh" })).at(0), "v2", `${method}: refresh`)
      assert.equal(versions(await list({ cacheMode: "use" })).at(0), "v2", `${method}: use after refresh`)
      assert.equal(server.asked(method), 3 * pages, `${method}: asked once more`)
    }
  })

  test("a listing without ttlMs, or with ttlMs 0, asks every time", T, async (t) => {
    // Shows: no positive ttl, nothing kept.
    const { server, source } = await open(t, {
      "prompts/list": { ttlMs: 0, cacheScope: "public" },
      "resources/templates/list": {},
    })
    for (let i = 0; i < 3; i++) {
      await source.listPrompts(NAME)
      await source.listResourceTemplates(NAME)
    }
    assert.equal(server.asked("prompts/list"), 3)
    assert.equal(server.asked("resources/templates/list"), 3)
  })
})

test("an invalid cacheMode rejects with TOOLNEXUS_INVALID_ARGUMENT and asks nothing", T, async (t) => {
  // Shows: every method that takes a cacheMode checks it before anything is sent.
  const { server, source } = await open(t)
  const before = server.counts()
  const bad = { cacheMode: "sometimes" } as never
  await rejectsWith(() => source.listResources(NAME, bad), "TOOLNEXUS_INVALID_ARGUMENT")
  await rejectsWith(() => source.listResources(undefined, bad), "TOOLNEXUS_INVALID_ARGUMENT")
  await rejectsWith(() => source.listResourceTemplates(NAME, bad), "TOOLNEXUS_INVALID_ARGUMENT")
  await rejectsWith(() => source.listPrompts(NAME, bad), "TOOLNEXUS_INVALID_ARGUMENT")
  await rejectsWith(() => source.readResource(NAME, "mem://public", bad), "TOOLNEXUS_INVALID_ARGUMENT")
  await rejectsWith(() => source.listSkills(NAME, bad), "TOOLNEXUS_INVALID_ARGUMENT")
  await rejectsWith(
    () => source.readResource(NAME, "mem://public", { cacheMode: 1 } as never),
    "TOOLNEXUS_INVALID_ARGUMENT",
  )
  assert.deepEqual(server.counts(), before)
})

test("a store view keeps, refreshes and bypasses as a source does", T, async (t) => {
  // Shows: the same rules through createMcpStore's view.
  const { server, closing } = await serve(t)
  const store = closing(await openStore(t, { url: server.url }))
  assert.equal(await text(store, "mem://public"), "mem://public v1")
  server.bump()
  assert.equal(await text(store, "mem://public"), "mem://public v1")
  assert.equal(await text(store, "mem://public", "bypass"), "mem://public v2")
  assert.equal(await text(store, "mem://public"), "mem://public v1")
  assert.equal(await text(store, "mem://public", "refresh"), "mem://public v2")
  assert.equal(await text(store, "mem://public"), "mem://public v2")
  assert.equal(server.asked(READ, "mem://public"), 3)
  await text(store, "mem://nottl")
  await text(store, "mem://nottl")
  assert.equal(server.asked(READ, "mem://nottl"), 2)
  await store.listResources(NAME)
  await store.listPrompts()
  assert.equal(versions(await store.listPrompts(NAME)).at(0), "v2")
  assert.equal(server.asked("resources/list"), 2)
  assert.equal(server.asked("prompts/list"), 1)
  await rejectsWith(() => store.listPrompts(NAME, { cacheMode: "never" } as never), "TOOLNEXUS_INVALID_ARGUMENT")
})

// ---------------------------------------------------------------- what the server says

describe("news from the server drops what is kept", () => {
  test("notifications/resources/updated of a subscribed URI drops its kept read", T, async (t) => {
    // Shows: after an update, "use" asks again and gets the new contents.
    const { server, source } = await open(t)
    const updates: ResourceUpdate[] = []
    const unsubscribe = await source.subscribeResource(NAME, "mem://public", (u) => void updates.push(u))
    assert.equal(await text(source, "mem://public"), "mem://public v1")
    server.bump()
    assert.equal(server.updated("mem://public"), 1, "one listen stream subscribed to mem://public")
    assert.ok(await poll(() => updates.length === 1, 10_000), "the update reached the host")
    assert.equal(await text(source, "mem://public"), "mem://public v2")
    assert.equal(server.asked(READ, "mem://public"), 2)
    await unsubscribe()
  })

  test("a list change the server announces drops the kept listings (2026-07-28: on a listen stream)", T, async (t) => {
    // Shows: a 2026-07-28 server may only announce list changes on a `subscriptions/listen`
    // stream that asked for them, so the kept listings of a server that declares
    // listChanged can only be dropped if the client opens one.
    const { server, source } = await open(t)
    await source.listResources(NAME)
    await source.listResourceTemplates(NAME)
    await source.listPrompts(NAME)
    const asking = (kind: "resources" | "prompts") =>
      poll(() => server.listening().some((accepted) => accepted[`${kind}ListChanged`]), 5_000)
    assert.ok(
      (await asking("resources")) && (await asking("prompts")),
      `no subscriptions/listen asked for resource and prompt list changes; open streams accepted: ${JSON.stringify(server.listening())}`,
    )
    server.bump()
    server.listChanged("resources")
    server.listChanged("prompts")
    assert.ok(
      await poll(async () => versions(await source.listResources(NAME)).at(0) === "v2", 5_000),
      "the kept resource listing was dropped",
    )
    assert.equal(versions(await source.listResourceTemplates(NAME)).at(0), "v2")
    assert.equal(versions(await source.listPrompts(NAME)).at(0), "v2")
  })
})

// ---------------------------------------------------------------- a fleet

describe("a fleet on one redis-server", () => {
  /** The answers the fleet shares, as Redis holds them. */
  const answers = (redis: Redis) => redis.keys("toolnexus:default:answers:*")

  /** Waits for `n` shared answers (they are written after the call resolves). */
  async function shared(redis: Redis, n: number) {
    const deadline = Date.now() + 10_000
    for (;;) {
      const found = await answers(redis)
      if (found.length >= n) return found
      if (Date.now() >= deadline) assert.fail(`${found.length} shared answers, expected ${n}: ${found.join(", ")}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }

  test("a public read is served to a second loadMcp from the state; a private one is asked again", T, async (t) => {
    // Shows: public answers are shared by entry without its secrets (another token shares
    // them), private ones never leave their session.
    const redis = await startRedis(t)
    const { server, closing } = await serve(t)
    const entry = (token: string) => ({ url: server.url, headers: { Authorization: `Bearer ${token}` } })
    const a = closing(await loadMcp({ [NAME]: entry("alpha-secret") }, { state: redis.url }))
    assert.equal(await text(a, "mem://public"), "mem://public v1")
    assert.equal(await text(a, "mem://private"), "mem://private v1")
    assert.equal((await shared(redis, 1)).length, 1, "only the public answer is shared")
    server.bump()

    const b = closing(await loadMcp({ [NAME]: entry("beta-secret") }, { state: redis.url }))
    assert.deepEqual(b.status, { [NAME]: "connected" })
    assert.equal(await text(b, "mem://public"), "mem://public v1", "from the shared state")
    assert.equal(server.asked(READ, "mem://public"), 1)
    assert.equal(await text(b, "mem://private"), "mem://private v2", "asked again")
    assert.equal(server.asked(READ, "mem://private"), 2)

    const kept = [...(await redis.dump()).values()].join("\n")
    assert.ok(!kept.includes("mem://private v"), "no private contents in the state")
    assert.ok(!kept.includes("alpha-secret") && !kept.includes("beta-secret"), "no secret in the state")
  })

  test("a public listing is served to a second store from the state; a private one is asked again", T, async (t) => {
    // Shows: the same for listings, between two createMcpStore instances.
    const redis = await startRedis(t)
    const { server, closing } = await serve(t)
    const a = closing(await openStore(t, { url: server.url }, redis.url))
    const resources = await a.listResources(NAME) // public
    await a.listResourceTemplates(NAME) // private
    await a.listPrompts(NAME) // public
    await shared(redis, 2)
    server.bump()

    const b = closing(await openStore(t, { url: server.url }, redis.url))
    assert.deepEqual(await b.listResources(NAME), resources)
    assert.equal(versions(await b.listPrompts(NAME)).at(0), "v1")
    assert.equal(server.asked("resources/list"), 2, "one listing of two pages, by the first store")
    assert.equal(server.asked("prompts/list"), 1)
    assert.equal(versions(await b.listResourceTemplates(NAME)).at(0), "v2")
    assert.equal(server.asked("resources/templates/list"), 2)
  })
})
