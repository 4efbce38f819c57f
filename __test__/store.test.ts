// Store mode: background start, listing from cache (sync and with the bounded smart
// wait), agent views and their isolation, list_changed refresh, self-healing of local
// and remote servers, the MCPStore-shaped JSON API, and closing without leftovers.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import {
  createMcpStore,
  serveStoreApi,
  type McpStore,
  type McpStoreView,
  type StoreServerStatus,
  type StoreToolInfo,
} from "toolnexus"
import { startSilent } from "./fixtures/remote-plain.mjs"
import { startStreamable } from "./fixtures/remote-streamable.mjs"
import {
  assertCleanExit,
  assertGone,
  exitAtOnce,
  fixture,
  isAlive,
  local,
  NODE,
  poll,
  readPids,
  runNode,
  serverCmd,
  sleep,
  tempDir,
  timed,
  toolsFlag,
} from "./helpers.js"

/** Every test gets a generous bound so a hang fails the test instead of the run. */
const T = { timeout: 60_000 }

const slowCmd = (delayMs: number, ...flags: string[]) => [
  NODE,
  fixture("store-slow.mjs"),
  `--delay=${delayMs}`,
  ...flags,
]
const dynamicCmd = (...flags: string[]) => [NODE, fixture("store-dynamic.mjs"), ...flags]
const flakyCmd = (...flags: string[]) => [NODE, fixture("store-flaky.mjs"), ...flags]

/** A store closed when the test ends. */
function openStore(t: TestContext, input?: string | object, opts?: Parameters<typeof createMcpStore>[1]): McpStore {
  const store = createMcpStore(input, opts)
  t.after(() => store.close())
  return store
}

const namesOf = (list: Array<{ name: string }>) => list.map((x) => x.name).sort()

/** Polls `check` until it holds, failing with `what` (and the last state seen) after `ms`. */
async function until<V>(
  what: string,
  check: () => V | undefined | false,
  ms = 15_000,
  show?: () => unknown,
): Promise<V> {
  const value = await poll(check, ms)
  assert.ok(
    value !== undefined && value !== false,
    `timed out after ${ms} ms waiting for ${what}${show ? `; last seen: ${JSON.stringify(show())}` : ""}`,
  )
  return value as V
}

/** The `StoreServerStatus` of `name` in `view`, failing when there is none. */
function statusOf(view: McpStoreView, name: string): StoreServerStatus {
  const s = view.status()[name]
  assert.ok(s, `no status for "${name}"; status: ${JSON.stringify(view.status())}`)
  return s
}

function toolOf(view: McpStoreView, name: string) {
  const tool = view.tools().find((x) => x.name === name)
  assert.ok(
    tool,
    `no tool ${name}; tools: ${view
      .tools()
      .map((x) => x.name)
      .join(", ")}`,
  )
  return tool
}

/** The pid in a `--pids` file, or undefined while there is none. */
const pidIn = (file: string): number | undefined =>
  fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as { server: number }).server : undefined

const STORE_KEYS = ["clientId", "description", "inputSchema", "name", "serviceName"]

// ---------------------------------------------------------------- background start and listing

describe("background start and listing", () => {
  test(
    "createMcpStore returns at once; listTools answers from memory, listToolsAsync waits for initializing servers",
    T,
    async (t) => {
      const started = Date.now()
      const store = openStore(t, {
        fast: local(
          toolsFlag(["a", { name: "b", description: "the b tool", inputSchema: { type: "object", properties: {} } }]),
        ),
        slow: { command: slowCmd(1_500, toolsFlag(["s1"])) },
        off: { url: "http://127.0.0.1:9/mcp", enabled: false },
      })
      const createMs = Date.now() - started
      assert.ok(createMs < 300, `createMcpStore took ${createMs} ms: it must not wait for servers`)

      // Nothing has had time to connect: both enabled servers are initializing.
      const early = store.status()
      assert.equal(early.fast?.state, "initializing", JSON.stringify(early))
      assert.equal(early.slow?.state, "initializing", JSON.stringify(early))
      assert.equal(early.off?.state, "disabled", JSON.stringify(early))
      assert.equal(early.off?.toolCount, 0)
      assert.equal(store.isInitializing(), true)
      const sync = store.listTools()
      assert.ok(Array.isArray(sync))
      assert.ok(!sync.some((x) => x.name === "slow_s1"), "the slow server cannot be listed yet")

      const { value: listed, ms } = await timed(() => store.listToolsAsync())
      assert.deepEqual(namesOf(listed), ["fast_a", "fast_b", "slow_s1"], `after ${ms} ms`)
      assert.equal(store.isInitializing(), false)

      const b = listed.find((x) => x.name === "fast_b")!
      assert.deepEqual(Object.keys(b).sort(), STORE_KEYS, "a ToolInfo has exactly the public fields")
      assert.equal(b.description, "the b tool")
      assert.equal(b.serviceName, "fast")
      assert.equal(b.clientId, "global_agent_store:fast")
      assert.equal(b.inputSchema.type, "object")
      assert.equal(listed.find((x) => x.name === "slow_s1")!.clientId, "global_agent_store:slow")

      const status = store.status()
      assert.deepEqual(Object.keys(status).sort(), ["fast", "off", "slow"])
      for (const [name, count] of [
        ["fast", 2],
        ["slow", 1],
      ] as const) {
        const s = status[name]!
        assert.equal(s.state, "connected", `${name}: ${JSON.stringify(s)}`)
        assert.equal(s.toolCount, count, `${name}: ${JSON.stringify(s)}`)
        assert.equal(s.restarts, 0)
        assert.equal(s.clientId, `global_agent_store:${name}`)
        const at = Date.parse(s.connectedAt ?? "")
        assert.ok(at >= started - 1_000 && at <= Date.now() + 1_000, `${name}: connectedAt ${s.connectedAt}`)
      }
      assert.equal(status.off!.state, "disabled")
      assert.equal(status.off!.clientId, "global_agent_store:off")

      // The sync call now answers the same from memory, and tools() gives handles for it.
      assert.deepEqual(store.listTools(), listed)
      const tools = store.tools()
      assert.deepEqual(namesOf(tools), namesOf(listed))
      const res = await toolOf(store, "fast_a").execute({ x: 1 })
      assert.equal(res.isError, false, res.output)
      assert.deepEqual(JSON.parse(res.output), { x: 1 })
      assert.equal(res.metadata?.server, "fast")
      assert.equal(typeof store.version, "number")
      assert.equal(store.forStore(), store.forStore())
    },
  )

  test("listTools is served from a cache: shared frozen entries until the version changes", T, async (t) => {
    const store = openStore(t, { c: local(toolsFlag(["x", "y"])) })
    await store.listToolsAsync()
    const version = store.version
    const a = store.listTools()
    const b = store.listTools()
    assert.notEqual(a, b, "each call returns its own array, free to sort or filter")
    assert.equal(a[0], b[0], "entries are not rebuilt while the version stands")
    assert.ok(Object.isFrozen(a[0]) && Object.isFrozen(a[0]!.inputSchema), "shared entries are frozen")
    assert.equal(store.version, version)
    assert.equal(store.tools()[0], store.tools()[0], "tool handles are not rebuilt either")
    assert.equal(store.status(), store.status(), "nor is the status")
  })

  test(
    "an entry's tools map narrows what the store shows and runs, as in loadMcp, from its catalog too",
    T,
    async (t) => {
      const catalogDir = tempDir(t)
      const config = {
        only: { ...local(toolsFlag(["x", "y", "z"])), tools: { x: true, z: true } },
        except: { ...local(toolsFlag(["x", "y"])), tools: { y: false } },
      }
      const names = (store: McpStore) =>
        store
          .listTools()
          .map((tool) => tool.name)
          .sort()
      const first = openStore(t, config, { catalogDir })
      await first.listToolsAsync()
      assert.deepEqual(names(first), ["except_x", "only_x", "only_z"])
      const hidden = await first.callTool("only_y", {})
      assert.equal(hidden.isError, true, "a tool the entry hides is not run")
      await first.close()
      // A fresh store shows its catalog's copy, narrowed the same, before its servers start.
      const lazy = openStore(t, config, { catalogDir, lazy: true })
      assert.deepEqual(names(lazy), ["except_x", "only_x", "only_z"])
    },
  )

  test("a config that cannot be read throws at once; a broken entry fails only its own server", T, async (t) => {
    assert.throws(() => createMcpStore("/no/such/mcp.json"), /no\/such\/mcp\.json/)
    assert.throws(() => createMcpStore({ a: { command: ["x"] } }, { waitLocalMs: -1 }), TypeError)

    const store = openStore(t, {
      malformed: { command: "not-an-array" },
      dies: exitAtOnce(),
      ok: local(toolsFlag(["x"])),
    })
    const { value: listed, ms } = await timed(() => store.listToolsAsync())
    assert.deepEqual(namesOf(listed), ["ok_x"])
    assert.ok(ms < 4_000, `a server that exits at once must not be waited for up to the bound (${ms} ms)`)
    const status = store.status()
    for (const name of ["malformed", "dies"]) {
      assert.equal(status[name]?.state, "failed", `${name}: ${JSON.stringify(status[name])}`)
      assert.equal(typeof status[name]!.lastError, "string", `${name} has no lastError`)
      assert.equal(status[name]!.toolCount, 0)
    }
    assert.equal(status.ok?.state, "connected")
  })

  test("an empty store and an all-disabled store list nothing, at once", T, async (t) => {
    const empty = openStore(t)
    assert.deepEqual(empty.listTools(), [])
    assert.deepEqual(await empty.listToolsAsync(), [])
    assert.deepEqual(empty.status(), {})

    const off = openStore(t, { a: { command: ["node", "x.mjs"], disabled: true } })
    const { value, ms } = await timed(() => off.listToolsAsync())
    assert.deepEqual(value, [])
    assert.ok(ms < 1_000, `nothing to wait for, yet listToolsAsync took ${ms} ms`)
    assert.equal(off.status().a?.state, "disabled")
  })

  test(
    "a tool renamed for providers (a sanitized server name, a shortened name) calls the tool its server lists",
    T,
    async (t) => {
      const long = "search_every_document_in_the_knowledge_base_by_semantic_similarity"
      const store = openStore(t, { "my.srv": local(toolsFlag(["echo"])), plain: local(toolsFlag([long, "echo"])) })
      const tools = await store.toolsAsync()
      assert.deepEqual(
        tools.map((tool) => [tool.name.length <= 64, tool.metadata?.server, tool.metadata?.tool]),
        [
          [true, "my.srv", "echo"],
          [true, "plain", long],
          [true, "plain", "echo"],
        ],
      )
      assert.equal(tools[0]!.name, "my_srv_echo")
      for (const tool of tools) {
        const res = await tool.execute({ from: tool.name })
        assert.deepEqual([res.isError, JSON.parse(res.output)], [false, { from: tool.name }], tool.name)
      }
    },
  )
})

// ---------------------------------------------------------------- smart wait

describe("smart wait", () => {
  test("a slow local server is waited for at most waitLocalMs", T, async (t) => {
    const store = openStore(
      t,
      { slow: { command: slowCmd(30_000) }, fast: local(toolsFlag(["f"])) },
      { waitLocalMs: 2_500 },
    )
    const { value: listed, ms } = await timed(() => store.listToolsAsync())
    assert.ok(ms >= 2_000 && ms < 5_000, `waited ${ms} ms; the bound is 2500 ms`)
    assert.deepEqual(namesOf(listed), ["fast_f"])
    assert.equal(statusOf(store, "slow").state, "initializing")
    assert.equal(statusOf(store, "fast").state, "connected")
  })

  test("a remote server that never answers is waited for 1.5 s by default", T, async (t) => {
    const silent = await startSilent()
    t.after(() => silent.close())
    const store = openStore(t, { silent: { url: silent.url } })
    const { value: listed, ms } = await timed(() => store.listToolsAsync())
    assert.deepEqual(listed, [])
    assert.ok(ms >= 1_300 && ms < 3_500, `waited ${ms} ms; the remote default is 1500 ms`)
    assert.equal(statusOf(store, "silent").state, "initializing")
  })

  test("waitRemoteMs configures the remote bound", T, async (t) => {
    const silent = await startSilent()
    t.after(() => silent.close())
    const store = openStore(t, { silent: { url: silent.url } }, { waitRemoteMs: 400 })
    const { ms } = await timed(() => store.listToolsAsync())
    assert.ok(ms >= 300 && ms < 1_300, `waited ${ms} ms; waitRemoteMs is 400`)
  })

  test("nothing initializing: listToolsAsync does not wait", T, async (t) => {
    const store = openStore(t, { a: local(toolsFlag(["x"])), dead: exitAtOnce() })
    await store.listToolsAsync()
    await until("no server initializing", () => !store.isInitializing())
    const { value, ms } = await timed(() => store.listToolsAsync())
    assert.deepEqual(namesOf(value), ["a_x"])
    assert.ok(ms < 1_000, `listToolsAsync took ${ms} ms with nothing initializing`)
  })

  test("an agent view waits only for the agent's own servers", T, async (t) => {
    const store = openStore(t, { slow: { command: slowCmd(30_000) } }, { waitLocalMs: 8_000 })
    const agent = store.forAgent("quick").addServers({ mine: local(toolsFlag(["m"])) })
    const { value: listed, ms } = await timed(() => agent.listToolsAsync())
    assert.deepEqual(namesOf(listed), ["mine_m"])
    assert.ok(
      ms < 6_000,
      `the agent view waited ${ms} ms: it must not wait for the store's slow server (bound 8000 ms)`,
    )
    assert.equal(store.isInitializing(), true, "the store view still has the slow server initializing")
    assert.equal(agent.isInitializing(), false)
  })
})

// ---------------------------------------------------------------- agent views

describe("agent views", () => {
  test(
    "two agents with the same service name see only their own; the store view sees both under unique names",
    T,
    async (t) => {
      // A store-level service that already holds the global name agent a1's "svc" would take.
      const store = openStore(t, { svcbya1: local(toolsFlag(["s"])) })
      const a1 = store.forAgent("a1").addServers({ svc: { command: serverCmd(), env: { WHO: "a1" } } })
      const a2 = store.forAgent("a2").addServers({ svc: { command: serverCmd(), env: { WHO: "a2" } } })
      assert.equal(store.forAgent("a1"), a1, "forAgent returns the same view for the same id")
      assert.equal(a1.agentId, "a1")
      assert.equal(store.agentId, null)

      const [l1, l2] = await Promise.all([a1.listToolsAsync(), a2.listToolsAsync()])
      for (const [agent, list] of [
        ["a1", l1],
        ["a2", l2],
      ] as const) {
        assert.ok(list.length > 0, `${agent} lists nothing`)
        for (const tool of list) {
          assert.equal(tool.serviceName, "svc", `${agent}: ${JSON.stringify(tool)}`)
          assert.equal(tool.clientId, `${agent}:svc`, `${agent}: ${JSON.stringify(tool)}`)
          assert.match(tool.name, /^svc_/)
          assert.deepEqual(Object.keys(tool).sort(), STORE_KEYS)
        }
        assert.ok(
          list.some((x) => x.name === "svc_env"),
          `${agent}: ${namesOf(list)}`,
        )
        assert.ok(!list.some((x) => x.name.startsWith("svcbya1")), `${agent} sees a store-level service`)
      }
      assert.deepEqual(namesOf(l1), namesOf(l2))
      assert.deepEqual(Object.keys(a1.status()), ["svc"])
      assert.equal(a1.status().svc!.clientId, "a1:svc")
      assert.equal(a2.status().svc!.clientId, "a2:svc")

      // Same local name, different servers: each call reaches the agent's own process.
      for (const agent of [a1, a2]) {
        const res = await toolOf(agent, "svc_env").execute({ names: ["WHO"] })
        assert.equal(res.isError, false, res.output)
        assert.deepEqual(JSON.parse(res.output), { WHO: agent.agentId })
        const viaName = await agent.callTool("svc_env", { names: ["WHO"] })
        assert.deepEqual(JSON.parse(viaName.output), { WHO: agent.agentId })
      }
      const missing = await a1.callTool("svcbya1_s", {})
      assert.equal(missing.isError, true)

      // The store view: everything, each service under one unique global name.
      const all = await store.listToolsAsync()
      const services = Object.fromEntries(all.map((x) => [x.serviceName, x.clientId]))
      assert.deepEqual(services, {
        svcbya1: "global_agent_store:svcbya1",
        svcbya1_2: "a1:svc",
        svcbya2: "a2:svc",
      })
      const names = all.map((x) => x.name)
      assert.equal(new Set(names).size, names.length, `duplicate tool names in the store view: ${names}`)
      assert.ok(names.includes("svcbya1_s"))
      assert.ok(names.includes("svcbya1_2_env"))
      assert.ok(names.includes("svcbya2_env"))
      assert.equal(all.length, 1 + l1.length + l2.length)
      assert.deepEqual(Object.keys(store.status()).sort(), ["svcbya1", "svcbya1_2", "svcbya2"])
      assert.equal(store.status().svcbya2!.clientId, "a2:svc")

      // A global name routes to the agent's server.
      const viaStore = await toolOf(store, "svcbya2_env").execute({ names: ["WHO"] })
      assert.deepEqual(JSON.parse(viaStore.output), { WHO: "a2" })

      // An agent with no servers sees nothing and waits for nothing.
      const { value: none, ms } = await timed(() => store.forAgent("nobody").listToolsAsync())
      assert.deepEqual(none, [])
      assert.ok(ms < 1_000, `an empty agent view waited ${ms} ms`)
      assert.deepEqual(store.forAgent("nobody").status(), {})
    },
  )

  test("agent ids are sanitized into global names, and a sanitized collision gets _2", T, async (t) => {
    const store = openStore(t)
    store.forAgent("team.x").addServers({ s: local(toolsFlag(["t"])) })
    store.forAgent("team_x").addServers({ s: local(toolsFlag(["t"])) })
    const all = await store.listToolsAsync()
    assert.deepEqual(all.map((x) => [x.name, x.serviceName, x.clientId]).sort(), [
      ["sbyteam_x_2_t", "sbyteam_x_2", "team_x:s"],
      ["sbyteam_x_t", "sbyteam_x", "team.x:s"],
    ])
    assert.deepEqual(namesOf(await store.forAgent("team.x").listToolsAsync()), ["s_t"])
    assert.equal(store.forAgent("team.x").listTools()[0]!.clientId, "team.x:s")
    assert.throws(() => store.forAgent(""), TypeError)
  })

  test(
    "names are provider-safe and unique in every view; metadata keeps the originals; each calls its tool",
    T,
    async (t) => {
      const long = "x".repeat(70)
      const store = openStore(t, { s: local(toolsFlag(["a.b", "a_b", long])) })
      const agent = store.forAgent("team").addServers({ s: local(toolsFlag(["a.b", "a_b"])) })
      for (const view of [store, agent]) {
        const listed = await view.listToolsAsync()
        const names = listed.map((x) => x.name)
        assert.ok(
          names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n)),
          `${names}`,
        )
        assert.equal(new Set(names).size, names.length, `duplicates in ${names}`)
        assert.deepEqual(namesOf(view.tools()), namesOf(listed))
      }
      assert.match(store.status().s!.protocolVersion!, /^2025-/, "the version the server negotiated")
      const inAgent = agent.tools()
      assert.deepEqual(
        inAgent.map((x) => x.metadata),
        [
          { server: "s", tool: "a.b", clientId: "team:s" },
          { server: "s", tool: "a_b", clientId: "team:s" },
        ],
      )
      // The same tools of the same service get the same names in another view of that name.
      const storeOwn = store.tools().filter((x) => x.serviceName === "s")
      assert.deepEqual(
        storeOwn.slice(0, 2).map((x) => x.name),
        inAgent.map((x) => x.name),
      )
      const longTool = storeOwn.find((x) => x.metadata?.tool === long)!
      assert.match(longTool.name, /^s_x+_[0-9a-f]{8}$/)
      const res = await store.callTool(longTool.name, { via: "long" })
      assert.deepEqual([res.isError, JSON.parse(res.output)], [false, { via: "long" }])
    },
  )

  test("addServers, removeServer and updateServer work on a running store", T, async (t) => {
    const dir = tempDir(t)
    const pidsFile = path.join(dir, "svc.pids")
    const store = openStore(t, { u: local(toolsFlag(["old"])) })
    const a1 = store.forAgent("a1").addServers({ svc: local(`--pids=${pidsFile}`, toolsFlag(["x"])) })
    await store.listToolsAsync()
    assert.deepEqual(namesOf(await a1.listToolsAsync()), ["svc_x"])
    const pids = await readPids(t, pidsFile)

    // remove: gone from the agent view and the store view, its process ended
    assert.equal(a1.removeServer("svc"), true)
    await until(
      "svc removed from the agent view",
      () => a1.listTools().length === 0,
      5_000,
      () => a1.listTools(),
    )
    assert.deepEqual(a1.status(), {})
    assert.ok(!store.listTools().some((x) => x.clientId === "a1:svc"))
    assert.equal(a1.removeServer("svc"), false, "removing twice")
    assert.equal(store.removeServer("nope"), false)
    await assertGone(pids, 5_000, "the removed server")

    // update: the new entry replaces the old one
    const before = store.version
    store.updateServer("u", { command: serverCmd(toolsFlag(["new1", "new2"])) })
    await until(
      "u relisted with its new tools",
      () => namesOf(store.listTools()).join() === "u_new1,u_new2",
      15_000,
      () => namesOf(store.listTools()),
    )
    assert.ok(store.version > before)
    assert.equal(statusOf(store, "u").state, "connected")

    // add to the running store view
    store.addServers({ late: local(toolsFlag(["l"])) })
    assert.deepEqual(namesOf(await store.listToolsAsync()), ["late_l", "u_new1", "u_new2"])
  })
})

// ---------------------------------------------------------------- staying current

describe("staying current", () => {
  test("notifications/tools/list_changed refreshes the cache, bumps the version and tells onChange", T, async (t) => {
    const store = openStore(t, { dyn: { command: dynamicCmd("--grow-after=1500") } })
    const events: number[] = []
    const stop = store.onChange((v) => events.push(v))
    const quiet: number[] = []
    store.forAgent("bystander").onChange((v) => quiet.push(v))

    assert.deepEqual(namesOf(await store.listToolsAsync()), ["dyn_first", "dyn_grow"])
    const v0 = store.version
    await until("onChange told of the server connecting", () => events.length > 0, 5_000)

    // The server adds "second" on its own, 1.5 s after initialization.
    await until(
      "dyn_second listed",
      () => store.listTools().some((x) => x.name === "dyn_second"),
      15_000,
      () => namesOf(store.listTools()),
    )
    assert.ok(store.version > v0, `version ${store.version} after the change, ${v0} before`)
    // Listeners are told asynchronously, so the cache can show the change first.
    await until(
      "onChange told of the change",
      () => events.some((v) => v > v0),
      5_000,
      () => ({ events, v0 }),
    )
    assert.equal(statusOf(store, "dyn").toolCount, 3)

    // A tool call that changes the list.
    const res = await toolOf(store, "dyn_grow").execute({ name: "third" })
    assert.equal(res.output, "added third")
    await until(
      "dyn_third listed",
      () => store.listTools().some((x) => x.name === "dyn_third"),
      15_000,
      () => namesOf(store.listTools()),
    )
    assert.ok(store.tools().some((x) => x.name === "dyn_third"))
    const third = await toolOf(store, "dyn_third").execute({})
    assert.equal(third.output, "third ok")

    assert.deepEqual(quiet, [], "an agent view with no servers was told of another's change")

    // After stop(), the listener hears nothing more.
    stop()
    const heard = events.length
    await toolOf(store, "dyn_grow").execute({ name: "fourth" })
    await until("dyn_fourth listed", () => store.listTools().some((x) => x.name === "dyn_fourth"))
    await sleep(100) // an absence cannot be awaited: a listener still told would have heard by now
    assert.equal(events.length, heard)
  })

  test("an agent's onChange hears its own servers' changes", T, async (t) => {
    const store = openStore(t)
    const agent = store.forAgent("a")
    // What the agent could see each time it was told of a change.
    const heard: string[][] = []
    agent.onChange(() => heard.push(namesOf(agent.listTools())))
    agent.addServers({ dyn: { command: dynamicCmd() } })
    await agent.listToolsAsync()
    await until(
      "the agent told of its server's tools",
      () => heard.some((names) => names.includes("dyn_grow")),
      5_000,
      () => heard,
    )
    await toolOf(agent, "dyn_grow").execute({ name: "more" })
    // Other changes (status) may be told in between; the one that lists dyn_more must come.
    await until(
      "the agent told of list_changed",
      () => heard.some((names) => names.includes("dyn_more")),
      10_000,
      () => heard,
    )
  })
})

// ---------------------------------------------------------------- self-healing

describe("self-healing", () => {
  test("a killed local server is restarted; status() shows the restart", T, async (t) => {
    const dir = tempDir(t)
    const pidsFile = path.join(dir, "k.pids")
    const store = openStore(t, { k: local(`--pids=${pidsFile}`, toolsFlag(["echo"])) }, { backoffMs: 200 })
    await store.listToolsAsync()
    const [first] = await readPids(t, pidsFile)
    fs.rmSync(pidsFile)
    process.kill(first!, "SIGKILL")

    const states = new Set<string>()
    await until(
      "k connected again after one restart",
      () => {
        const s = store.status().k
        if (s) states.add(s.state)
        return s?.state === "connected" && s.restarts === 1
      },
      15_000,
      () => store.status(),
    )
    assert.ok(states.has("reconnecting"), `states seen: ${[...states]}`)
    const [second] = await readPids(t, pidsFile)
    assert.notEqual(second, first)
    assert.ok(isAlive(second!))
    assert.deepEqual(namesOf(store.listTools()), ["k_echo"])
    const res = await toolOf(store, "k_echo").execute({ after: "restart" })
    assert.equal(res.isError, false, res.output)
    assert.deepEqual(JSON.parse(res.output), { after: "restart" })
  })

  /** A store whose one server `k`, offering `tool`, was just killed and is reconnecting. */
  async function reconnecting(t: TestContext, tool: string, backoffMs: number) {
    const pidsFile = path.join(tempDir(t), "k.pids")
    const store = openStore(t, { k: local(`--pids=${pidsFile}`, toolsFlag([tool])) }, { backoffMs })
    await store.listToolsAsync()
    const handle = toolOf(store, `k_${tool}`)
    const [pid] = await readPids(t, pidsFile)
    fs.rmSync(pidsFile)
    process.kill(pid!, "SIGKILL")
    await until(
      "k reconnecting",
      () => store.status().k?.state === "reconnecting",
      5_000,
      () => store.status(),
    )
    return { store, tool: handle, pidsFile }
  }

  test("a call made while its server is reconnecting waits for it, up to its timeout", T, async (t) => {
    const { store, tool: echo, pidsFile } = await reconnecting(t, "echo", 2_500)

    // Too short a timeout: an error result, but only once the timeout has run out.
    const short = await timed(() => echo.execute({ n: 1 }, { timeout: 600 }))
    assert.equal(short.value.isError, true, short.value.output)
    assert.ok(short.ms >= 450, `failed after ${short.ms} ms instead of waiting out its 600 ms timeout`)

    // Long enough: it waits for the restart and succeeds.
    const long = await timed(() => echo.execute({ n: 2 }, { timeout: 20_000 }))
    assert.equal(long.value.isError, false, long.value.output)
    assert.deepEqual(JSON.parse(long.value.output), { n: 2 })
    assert.equal(statusOf(store, "k").restarts, 1)
    await readPids(t, pidsFile)
  })

  test("a call that waits for a reconnecting server spends at most its timeout in all", T, async (t) => {
    // The restart waits out a 1 s backoff, so it takes at least 1 s of the call's 2.5 s.
    const { tool: sleepTool, pidsFile } = await reconnecting(t, "sleep", 1_000)
    // What the restart leaves of the 2.5 s is too short for a 2 s call: it runs out of time
    // (the server is slow to answer, or, on a loaded machine, still restarting). A fresh
    // 2.5 s after the restart would have let it succeed.
    const call = await sleepTool.execute({ ms: 2_000 }, { timeout: 2_500 })
    assert.equal(call.isError, true, call.output)
    assert.equal(call.metadata?.code, "TOOLNEXUS_TIMEOUT", call.output)
    assert.match(
      call.output,
      /^MCP server "k" (did not answer tools\/call "sleep" within \d+ ms|is (reconnecting|initializing): .*)$/,
    )
    await readPids(t, pidsFile)
  })

  test("restarts back off exponentially and stop after maxRestarts", T, async (t) => {
    const dir = tempDir(t)
    const starts = path.join(dir, "starts")
    const store = openStore(
      t,
      { flaky: { command: flakyCmd("--exit-after=1000", `--starts=${starts}`) } },
      {
        maxRestarts: 3,
        backoffMs: 400,
        backoffMaxMs: 10_000,
      },
    )
    /** The fixture's "start"/"exit" events: `[event, pid, epoch ms]`. */
    const events = () =>
      fs.existsSync(starts)
        ? fs
            .readFileSync(starts, "utf8")
            .trim()
            .split("\n")
            .map((l) => l.split(" "))
        : []
    const times = (event: string) =>
      events()
        .filter(([e]) => e === event)
        .map(([, pid, at]) => [Number(pid), Number(at)] as const)
    await until(
      "flaky failed for good",
      () => store.status().flaky?.state === "failed",
      30_000,
      () => store.status(),
    )
    const s = statusOf(store, "flaky")
    assert.equal(s.restarts, 3)
    assert.equal(typeof s.lastError, "string")
    const started = times("start")
    assert.equal(started.length, 4, `events: ${JSON.stringify(events())}`)
    for (const [pid] of started) t.after(() => isAlive(pid) && process.kill(pid, "SIGKILL"))
    // From each exit to the next start: a backoff of 400, 800, 1600 ms. Only lower bounds:
    // a loaded machine makes every wait longer, never shorter.
    const exited = times("exit")
    const waits = started.slice(1).map(([, at], i) => at - exited[i]![1])
    assert.ok(waits[0]! >= 350 && waits[1]! >= 750 && waits[2]! >= 1_550, `waits from exit to restart: ${waits} ms`)
    await sleep(1_000) // an absence cannot be awaited: no start in the second after giving up
    assert.equal(times("start").length, 4, "started again after giving up")
    assert.equal(statusOf(store, "flaky").state, "failed")
  })

  test("a dropped remote session is re-established; the call succeeds and status() shows it", T, async (t) => {
    const srv = await startStreamable({ stateful: true })
    t.after(() => srv.close())
    const store = openStore(t, { r: { url: srv.url, timeout: 20_000 } })
    await store.listToolsAsync()
    assert.equal(statusOf(store, "r").state, "connected")
    const session = toolOf(store, "r_session")
    const first = await session.execute({})
    assert.equal(first.isError, false, first.output)
    assert.equal(first.output, srv.issued.at(-1))

    await srv.expireSessions()
    const second = await session.execute({}, { timeout: 15_000 })
    assert.equal(second.isError, false, second.output)
    assert.notEqual(second.output, first.output)
    assert.equal(second.output, srv.issued.at(-1))
    await until(
      "r connected with the restart counted",
      () => {
        const s = store.status().r
        return s?.state === "connected" && s.restarts >= 1
      },
      10_000,
      () => store.status(),
    )
    assert.deepEqual(namesOf(store.listTools()), ["r_drop_connection", "r_drop_stream", "r_echo", "r_session"])
  })
})

// ---------------------------------------------------------------- JSON API

describe("JSON API", () => {
  test("serveStoreApi answers list_tools for the store and for an agent in MCPStore's shape", T, async (t) => {
    const weatherTool = {
      name: "get_current",
      description: "Current weather",
      inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    }
    const store = openStore(t, { "weather-api": local(toolsFlag([weatherTool])) })
    store.forAgent("agent1").addServers({
      "maps-api": local(
        toolsFlag([
          { name: "search_location", description: "Find a place", inputSchema: { type: "object", properties: {} } },
        ]),
      ),
    })
    await store.listToolsAsync()

    const api = await serveStoreApi(store, { port: 0 })
    t.after(() => api.close())
    assert.ok(api.port > 0)
    const base = `http://127.0.0.1:${api.port}`

    const res = await fetch(`${base}/for_store/list_tools`)
    assert.equal(res.status, 200)
    assert.match(res.headers.get("content-type") ?? "", /application\/json/)
    const body = await res.json()
    const byName = Object.fromEntries(store.listTools().map((x) => [x.name, x]))
    const snake = (x: StoreToolInfo) => ({
      name: x.name,
      description: x.description,
      service_name: x.serviceName,
      client_id: x.clientId,
      inputSchema: x.inputSchema,
    })
    assert.deepEqual(body.data, store.listTools().map(snake), "data is the store view, in its order")
    assert.deepEqual(
      [...body.data].sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name)),
      [
        {
          name: "maps-apibyagent1_search_location",
          description: "Find a place",
          service_name: "maps-apibyagent1",
          client_id: "agent1:maps-api",
          inputSchema: byName["maps-apibyagent1_search_location"]!.inputSchema,
        },
        {
          name: "weather-api_get_current",
          description: "Current weather",
          service_name: "weather-api",
          client_id: "global_agent_store:weather-api",
          inputSchema: byName["weather-api_get_current"]!.inputSchema,
        },
      ],
    )
    assert.equal(body.success, true)
    assert.deepEqual(body.metadata, { total_tools: 2, services_count: 2 })
    assert.equal(body.message, "Retrieved 2 tools from 2 services")
    assert.deepEqual(Object.keys(body).sort(), ["data", "message", "metadata", "success"])
    assert.deepEqual(
      body.data.find((x: { name: string }) => x.name === "weather-api_get_current").inputSchema.required,
      ["location"],
    )

    const agentRes = await fetch(`${base}/for_agent/agent1/list_tools`)
    assert.equal(agentRes.status, 200)
    const agentBody = await agentRes.json()
    assert.deepEqual(agentBody, {
      success: true,
      data: [
        {
          name: "maps-api_search_location",
          description: "Find a place",
          service_name: "maps-api",
          client_id: "agent1:maps-api",
          inputSchema: store.forAgent("agent1").listTools()[0]!.inputSchema,
        },
      ],
      metadata: { total_tools: 1, services_count: 1 },
      message: "Retrieved 1 tools from 1 services for agent 'agent1'",
    })

    const other = await (await fetch(`${base}/for_agent/someone%20else/list_tools`)).json()
    assert.deepEqual(other, {
      success: true,
      data: [],
      metadata: { total_tools: 0, services_count: 0 },
      message: "Retrieved 0 tools from 0 services for agent 'someone else'",
    })

    const missing = await fetch(`${base}/for_store/nothing_here`)
    assert.equal(missing.status, 404)
    const missingBody = await missing.json()
    assert.equal(missingBody.success, false)
    assert.equal(typeof missingBody.message, "string")

    const post = await fetch(`${base}/for_store/list_tools`, { method: "POST" })
    assert.equal(post.status, 405)
    assert.equal((await post.json()).success, false)

    await api.close()
    await api.close()
    await assert.rejects(fetch(`${base}/for_store/list_tools`))
  })
})

// ---------------------------------------------------------------- closing

describe("closing", () => {
  test("close() ends every server, agent servers and initializing ones included; it is idempotent", T, async (t) => {
    const dir = tempDir(t)
    const file = (name: string) => path.join(dir, `${name}.pids`)
    const store = createMcpStore({
      a: local(`--pids=${file("a")}`, "--grandchild"),
      stubborn: local(`--pids=${file("stubborn")}`, "--stubborn"),
      slow: { command: slowCmd(30_000, `--pids=${file("slow")}`) },
    })
    store.forAgent("x").addServers({ b: local(`--pids=${file("b")}`) })
    await store.forAgent("x").listToolsAsync()
    await until(
      "a connected",
      () => store.status().a?.state === "connected",
      15_000,
      () => store.status(),
    )
    const pids = (await Promise.all(["a", "stubborn", "slow", "b"].map((n) => readPids(t, file(n))))).flat()
    const echo = toolOf(store, "a_echo")

    await store.close()
    await store.close()
    await assertGone(pids, 3_000, "server processes after close()")
    const after = await timed(() => echo.execute({}))
    assert.equal(after.value.isError, true)
    assert.ok(after.ms < 2_000, `a call after close() took ${after.ms} ms`)
  })

  test("closing during a restart backoff starts nothing later", T, async (t) => {
    const dir = tempDir(t)
    const pidsFile = path.join(dir, "k.pids")
    const store = createMcpStore({ k: local(`--pids=${pidsFile}`) }, { backoffMs: 1_000 })
    await store.listToolsAsync()
    const [pid] = await readPids(t, pidsFile)
    fs.rmSync(pidsFile)
    process.kill(pid!, "SIGKILL")
    await until(
      "k reconnecting",
      () => store.status().k?.state === "reconnecting",
      5_000,
      () => store.status(),
    )
    await store.close()
    await sleep(2_000) // an absence cannot be awaited: twice the 1 s backoff a restart would wait out
    assert.equal(pidIn(pidsFile), undefined, "a server was started after close()")
  })

  for (const [label, ending] of [
    ["ends on its own", ""],
    ["calls process.exit(0)", "process.exit(0)"],
  ] as const) {
    test(`a Node process with a store that never calls close() ${label}, leaving no server behind`, T, async (t) => {
      const dir = tempDir(t)
      const pidsFile = path.join(dir, "s.pids")
      const agentPids = path.join(dir, "b.pids")
      const run = await runNode(
        `
        import { createMcpStore } from "toolnexus"
        const store = createMcpStore(${JSON.stringify({ s: local(`--pids=${pidsFile}`, "--grandchild") })})
        store.forAgent("x").addServers(${JSON.stringify({ b: local(`--pids=${agentPids}`) })})
        await store.listToolsAsync()
        await store.forAgent("x").listToolsAsync()
        console.log(JSON.stringify(Object.values(store.status()).map((s) => s.state)))
        ${ending}
      `,
        { timeout: 20_000 },
      )
      const pids = [...(await readPids(t, pidsFile)), ...(await readPids(t, agentPids))]
      assertCleanExit(run)
      assert.deepEqual(JSON.parse(run.stdout), ["connected", "connected"])
      await assertGone(pids, 3_000, "server processes of a process that exited")
    })
  }
})
