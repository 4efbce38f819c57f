// serveMcp: what a gateway passes through besides tools, checked with the official
// clients over HTTP. SDK v1 (@modelcontextprotocol/sdk) speaks 2025-11-25 (initialize, a
// session, resources/subscribe); SDK v2 (@modelcontextprotocol/client 2.4.0) with
// `versionNegotiation: "auto"` speaks 2026-07-28 (server/discover, subscriptions/listen).
// Resource subscriptions in both eras, against upstreams of both eras
// (fixtures/subscribe-v1.mjs, fixtures/subscribe-v2.mjs); one URI listed by two servers;
// the servers' instructions under the view's names; a lazy server started by a
// downstream call; an upstream's secret kept from downstream results (in a text, and as
// a key of structured content); two servers' prompts of one name. Upstreams:
// fixtures/serve-offers-upstream.mjs (its offers carry its `--name`).
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { createMcpStore, type McpStore } from "toolnexus"
import { COUNTER } from "./fixtures/subscribe-v1.mjs"
import { childPids, fixture, NODE, poll, sleep, tempDir } from "./helpers.js"
import { cleanup, served as servedWith, serveView, v1Http, v2Http, type Later, type Served } from "./serve-helpers.js"
import { LEGACY, MODERN, pidsIn, plain, T, texts } from "./serve-helpers.js"

/** The URI every serve-offers-upstream lists. */
const SHARED_URI = "shared://doc"
const SECRET = "s3cret-value-123"
/** How long a test waits for an update that must not come. */
const QUIET_MS = 1_000

/** A serve-offers-upstream entry whose offers carry `name`. */
const offers = (name: string, flags: string[] = [], extra: object = {}) => ({
  command: [NODE, fixture("serve-offers-upstream.mjs"), `--name=${name}`, ...flags],
  ...extra,
})

/** Subscribable upstreams of both eras: SDK v1 (2025-11-25) and SDK v2 pinned to 2026-07-28. */
const SUBSCRIBABLE = [
  ["an SDK v1 upstream (2025-11-25)", () => ({ command: [NODE, fixture("subscribe-v1.mjs")] }), true],
  [
    "an SDK v2 upstream (2026-07-28)",
    () => ({ command: [NODE, fixture("subscribe-v2.mjs")], protocol: MODERN as typeof MODERN }),
    false,
  ],
] as const

/** A store of `servers` (and agents' servers, by agent), ready, served over HTTP; all closed when the test ends. */
const served = (t: TestContext, servers: Record<string, object>, agents: Record<string, Record<string, object>> = {}) =>
  servedWith(t, servers, { agents, store: { catalog: false } })

/** An SDK v1 client at `url`, closed when the test ends; it speaks 2025-11-25. */
async function legacyClient(s: { later: Later }, url: string) {
  const { client, transport } = await v1Http(s.later, url)
  assert.equal(transport.protocolVersion, LEGACY)
  return client
}

/** An SDK v2 client at `url`, closed when the test ends; it speaks 2026-07-28. */
async function modernClient(s: { later: Later }, url: string) {
  const client = await v2Http(s.later, url)
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
  return client
}

const contentTexts = (read: { contents: Array<{ text?: string } | { blob?: string }> }) =>
  read.contents.map((c) => ("text" in c ? c.text : undefined))

/** The subscribe/unsubscribe requests subscribe-v1.mjs saw, through its `events` tool. */
async function upstreamEvents(store: McpStore) {
  const result = await store.callTool("sub_events", {})
  assert.equal(result.isError, false, result.output)
  return JSON.parse(result.output) as Array<[string, string]>
}

/**
 * Calls `bump` until `heard()` holds (or 10 s pass); the number of calls it took. A
 * downstream's first update may be lost to a stream still opening, so one call is not
 * always enough to show that updates flow at all.
 */
async function bumpUntil(bump: () => Promise<unknown>, heard: () => boolean) {
  let calls = 0
  for (const deadline = Date.now() + 10_000; !heard() && Date.now() < deadline;) {
    await bump()
    calls++
    await poll(heard, 1_000)
  }
  return calls
}

/**
 * The subscribable upstream `entry` served and a client of it (`connect`), which was told
 * it may subscribe; `updates` is for the updates it hears.
 */
async function subscribable<C extends { getServerCapabilities(): { resources?: { subscribe?: boolean } } | undefined }>(
  t: TestContext,
  entry: object,
  connect: (s: Served, url: string) => Promise<C>,
) {
  const s = await served(t, { sub: entry })
  const client = await connect(s, s.url)
  const capabilities = client.getServerCapabilities()
  assert.equal(capabilities?.resources?.subscribe, true, JSON.stringify(capabilities))
  return { s, client, updates: [] as Array<{ uri: string }> }
}

/**
 * Asserts that two more `bump`s bring no more `updates`, now that `why` ("unsubscribing"),
 * and that the gateway unsubscribed upstream, where the upstream (`legacyUpstream`) tells.
 */
async function assertNoMoreUpdates(
  s: Served,
  updates: unknown[],
  bump: () => Promise<unknown>,
  legacyUpstream: boolean,
  why: string,
) {
  const seen = updates.length
  await bump()
  await bump()
  await sleep(QUIET_MS)
  assert.deepEqual(updates.slice(seen), [], `no update after ${why}`)
  if (legacyUpstream) {
    const ended = await poll(
      async () => (await upstreamEvents(s.store)).some(([what, uri]) => what === "unsubscribe" && uri === COUNTER),
      5_000,
    )
    assert.ok(ended, `the upstream was never unsubscribed: ${JSON.stringify(await upstreamEvents(s.store))}`)
  }
}

describe("serveMcp: resource subscriptions, 2025-11-25 (SDK v1 client, resources/subscribe)", T, () => {
  for (const [upstream, entry, legacyUpstream] of SUBSCRIBABLE) {
    test(`updates reach the session until it unsubscribes (${upstream})`, async (t) => {
      const { s, client, updates } = await subscribable(t, entry(), legacyClient)
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
        updates.push(plain(n.params))
      })
      await sleep(300) // the GET stream the notifications come on

      await client.subscribeResource({ uri: COUNTER })
      if (legacyUpstream) {
        assert.deepEqual((await upstreamEvents(s.store)).at(-1), ["subscribe", COUNTER], "subscribed upstream")
      }
      const bump = () => client.callTool({ name: "sub_bump", arguments: {} })
      const calls = await bumpUntil(bump, () => updates.length > 0)
      assert.ok(updates.length > 0, `no notifications/resources/updated after ${calls} bumps`)
      assert.equal(calls, 1, `the first update came only after ${calls} bumps`)
      assert.deepEqual(updates, [{ uri: COUNTER }], "one update, for the URI subscribed")

      await client.unsubscribeResource({ uri: COUNTER })
      await assertNoMoreUpdates(s, updates, bump, legacyUpstream, "unsubscribing")
    })
  }
})

describe("serveMcp: resource subscriptions, 2026-07-28 (SDK v2 client, subscriptions/listen)", T, () => {
  for (const [upstream, entry, legacyUpstream] of SUBSCRIBABLE) {
    test(`a listen stream naming the URI hears its updates until it closes (${upstream})`, async (t) => {
      const { s, client, updates } = await subscribable(t, entry(), modernClient)
      client.setNotificationHandler("notifications/resources/updated", (n) => {
        updates.push(plain(n.params))
      })

      const subscription = await client.listen({ resourceSubscriptions: [COUNTER] })
      assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, [COUNTER], "the URI is honoured")
      const bump = () => client.callTool({ name: "sub_bump", arguments: {} })
      const calls = await bumpUntil(bump, () => updates.length > 0)
      assert.ok(updates.length > 0, `no notifications/resources/updated on the stream after ${calls} bumps`)
      // The acknowledgement may come before the gateway's own upstream subscription does.
      t.diagnostic(`the first update came after ${calls} bump(s)`)
      assert.ok(
        updates.every((u) => u.uri === COUNTER),
        `updates for the URI listened to only: ${JSON.stringify(updates)}`,
      )
      if (legacyUpstream) {
        assert.deepEqual((await upstreamEvents(s.store)).at(0), ["subscribe", COUNTER], "subscribed upstream")
      }

      await subscription.close()
      assert.equal(await subscription.closed, "local")
      await assertNoMoreUpdates(s, updates, bump, legacyUpstream, "the stream closed")
    })
  }
})

describe("serveMcp: one resource URI listed by two servers", T, () => {
  // zeta comes first in the view (config order), though not in alphabetical order.
  const servers = () => ({ zeta: offers("zeta"), alpha: offers("alpha") })
  const QUALIFIED = `toolnexus://alpha/${SHARED_URI}`

  for (const [title, connect] of [
    ["an SDK v1 client (2025-11-25): the first server keeps the URI, the other's is qualified", legacyClient],
    ["an SDK v2 client (2026-07-28): the same listing and reads", modernClient],
  ] as const) {
    test(title, async (t) => {
      const s = await served(t, servers())
      const client = await connect(s, s.url)
      const { resources } = await client.listResources()
      assert.deepEqual(
        resources.map((r) => r.uri),
        [SHARED_URI, QUALIFIED],
      )
      assert.deepEqual(contentTexts(await client.readResource({ uri: SHARED_URI })), ["doc of zeta"])
      assert.deepEqual(contentTexts(await client.readResource({ uri: QUALIFIED })), ["doc of alpha"])
    })
  }
})

describe("serveMcp: the servers' instructions", T, () => {
  const ZETA = "Zeta rules: be brief."
  const ALPHA = "Alpha rules: cite sources."
  const DOCS = "Docs rules: search first."
  const setup = (t: TestContext) =>
    served(
      t,
      {
        zeta: offers("zeta", [`--instructions=${ZETA}`]),
        bare: offers("bare"),
        alpha: offers("alpha", [`--instructions=${ALPHA}`]),
      },
      { research: { docs: offers("docs", [`--instructions=${DOCS}`]) } },
    )

  test("each under `## <name>`, the name the view gives the server, in both eras", async (t) => {
    const s = await setup(t)
    const sections = [`## zeta\n\n${ZETA}`, `## alpha\n\n${ALPHA}`, `## docsbyresearch\n\n${DOCS}`]
    for (const [era, instructions] of [
      [LEGACY, (await legacyClient(s, s.url)).getInstructions()],
      [MODERN, (await modernClient(s, s.url)).getInstructions()],
    ] as const) {
      assert.ok(instructions, `${era}: no instructions`)
      for (const section of sections) {
        assert.ok(
          instructions.includes(section),
          `${era}: no ${JSON.stringify(section)} in ${JSON.stringify(instructions)}`,
        )
      }
      assert.ok(!instructions.includes("## bare"), `${era}: a server without instructions has no section`)
    }

    // The agent's view names its server `docs`, and holds only that one.
    const agentUrl = s.url.replace(/\/mcp$/, "/agents/research/mcp")
    assert.equal((await legacyClient(s, agentUrl)).getInstructions(), `## docs\n\n${DOCS}`)
    assert.equal((await modernClient(s, agentUrl)).getInstructions(), `## docs\n\n${DOCS}`)
  })
})

describe("serveMcp: a lazy server", T, () => {
  test("listed from the catalog; it starts on the first downstream tools/call, which succeeds", async (t) => {
    const dir = tempDir(t)
    const catalogDir = path.join(dir, "catalog")
    const pidsFile = path.join(dir, "pids")
    const started = () => pidsIn(pidsFile)
    const entry = offers("lazy", [`--pids=${pidsFile}`])

    // A first store lists the server live, which puts its tools in the catalog.
    const warm = createMcpStore({ mcpServers: { lazy: entry } }, { catalogDir })
    t.after(() => warm.close())
    await warm.listToolsAsync()
    const written = () => fs.existsSync(catalogDir) && fs.readdirSync(catalogDir).some((f) => f.endsWith(".json"))
    assert.ok(await poll(written, 5_000), "the catalog was written")
    await warm.close()
    assert.equal(started().length, 1, "the warm store started the server once")

    const before = childPids()
    const later = cleanup(t)
    const store = createMcpStore({ mcpServers: { lazy: { ...entry, lazy: true } } }, { catalogDir })
    later(() => store.close())
    const gateway = await serveView(later, store)
    const client = await legacyClient({ later }, gateway.url!)
    const { tools } = await client.listTools()
    assert.deepEqual(
      tools.map((x) => x.name),
      ["lazy_echo", "lazy_secret", "lazy_secret_as_key"],
      "the catalog's tools",
    )
    // An absence cannot be awaited: a process started by mistake would be there by now.
    await sleep(300)
    assert.equal(store.status().lazy?.state, "lazy")
    assert.deepEqual(childPids(), before, "no process before the first call")
    assert.equal(started().length, 1, "no start before the first call")

    const echo = await client.callTool({ name: "lazy_echo", arguments: { text: "wake up" } })
    assert.notEqual(echo.isError, true, JSON.stringify(echo))
    assert.deepEqual(texts(echo), ["wake up"])
    assert.equal(store.status().lazy?.state, "connected")
    assert.equal(started().length, 2, "the call started the server once")
    assert.equal(childPids().length, before.length + 1, "one process after the call")
  })
})

describe("serveMcp: an upstream's secret stays upstream", T, () => {
  test("a result holding the value of its env never reaches a downstream client whole", async (t) => {
    const s = await served(t, { vault: offers("vault", [], { env: { API_KEY: SECRET } }) })
    // The store's own call, for the record: what the host itself gets back.
    const direct = await s.store.callTool("vault_secret", {})
    t.diagnostic(`direct store call: ${JSON.stringify({ isError: direct.isError, output: direct.output })}`)

    const clients = [
      [LEGACY, await legacyClient(s, s.url)],
      [MODERN, await modernClient(s, s.url)],
    ] as const
    for (const [era, client] of clients) {
      const result = await client.callTool({ name: "vault_secret", arguments: {} })
      const whole = JSON.stringify(result)
      assert.notEqual(result.isError, true, `${era}: ${whole}`)
      assert.ok(texts(result).length > 0, `${era}: no content: ${whole}`)
      assert.ok(!whole.includes(SECRET), `${era}: the secret reached the downstream client: ${whole}`)
      t.diagnostic(`${era} through the gateway: ${whole}`)
      // Replaced where it stood, as every text toolnexus passes on has a secret replaced.
      assert.deepEqual(texts(result), ["the key is [redacted]"], `${era}: ${whole}`)

      // The value as a key of the structured content: the key is replaced the same way.
      const keyed = await client.callTool({ name: "vault_secret_as_key", arguments: {} })
      const keyedWhole = JSON.stringify(keyed)
      assert.notEqual(keyed.isError, true, `${era}: ${keyedWhole}`)
      assert.ok(
        !keyedWhole.includes(SECRET),
        `${era}: the secret reached the downstream client as a key: ${keyedWhole}`,
      )
      t.diagnostic(`${era} through the gateway, the secret as a key: ${keyedWhole}`)
      assert.deepEqual(keyed.structuredContent, { "[redacted]": true }, `${era}: ${keyedWhole}`)
    }
  })
})

describe("serveMcp: two servers' prompts of one name", T, () => {
  const servers = () => ({ zeta: offers("zeta"), alpha: offers("alpha") })
  const message = async (get: Promise<{ messages: unknown[] }>) => plain((await get).messages)
  const greeting = (name: string) => [{ role: "user", content: { type: "text", text: `${name} greets Ann` } }]

  test("listed under distinct names, each reaching its own server, in both eras", async (t) => {
    const s = await served(t, servers())
    const legacy = await legacyClient(s, s.url)
    const modern = await modernClient(s, s.url)
    for (const [era, client] of [
      [LEGACY, legacy],
      [MODERN, modern],
    ] as const) {
      const { prompts } = await client.listPrompts()
      assert.deepEqual(
        prompts.map((p) => p.name),
        ["zeta_greet", "alpha_greet"],
        era,
      )
      for (const server of ["zeta", "alpha"]) {
        const got = client.getPrompt({ name: `${server}_greet`, arguments: { who: "Ann" } })
        assert.deepEqual(await message(got), greeting(server), `${era}: ${server}_greet`)
      }
    }
  })
})
