// Store views under load and odd input: a schema nested deeper than the call stack goes,
// caches and change listeners keyed on each view's own revision.
import assert from "node:assert/strict"
import { describe, test, type TestContext } from "node:test"
import v8 from "node:v8"
import vm from "node:vm"
import { createMcpStore, serveStoreApi, type McpStore } from "toolnexus"
import { fixture, local, NODE, poll, toolsFlag } from "./helpers.js"

const T = { timeout: 60_000 }

function openStore(t: TestContext, input?: string | object, opts?: Parameters<typeof createMcpStore>[1]): McpStore {
  const store = createMcpStore(input, opts)
  t.after(() => store.close())
  return store
}

const namesOf = (list: Array<{ name: string }>) => list.map((x) => x.name).sort()

// ---------------------------------------------------------------- deep schemas

const DEPTH = 10_000

/** `{"a":{"a":...{}}}`, DEPTH levels, as text: JSON.stringify cannot write it. */
const nested = `${'{"a":'.repeat(DEPTH)}{}${"}".repeat(DEPTH)}`

/** How many levels of `a` the schema's `properties.deep` has, counted without recursion. */
function depthOf(schema: unknown): number {
  let node = (schema as { properties: { deep: unknown } }).properties.deep as { a?: unknown }
  let depth = 0
  while (node.a !== undefined) {
    assert.ok(Object.isFrozen(node), `level ${depth} is not frozen`)
    node = node.a as { a?: unknown }
    depth++
  }
  return depth
}

describe("a schema nested 10,000 levels deep", () => {
  test("lists, makes tools and serves the JSON API; the other servers are untouched", T, async (t) => {
    // The official SDK server writes its answers with JSON.stringify: it needs a bigger stack.
    const tools = `--tools=[{"name":"deep","inputSchema":{"type":"object","properties":{"deep":${nested}}}}]`
    const store = openStore(t, {
      deep: { command: [NODE, "--stack-size=4000", fixture("server.mjs"), tools] },
      plain: local(toolsFlag(["x"])),
    })
    store.forAgent("a").addServers({ mine: local(toolsFlag(["m"])) })
    const listed = await store.listToolsAsync()
    assert.deepEqual(namesOf(listed), ["deep_deep", "minebya_m", "plain_x"], JSON.stringify(store.status()))
    assert.deepEqual(namesOf(store.listTools()), namesOf(listed))
    assert.deepEqual(namesOf(store.tools()), namesOf(listed))
    assert.deepEqual(namesOf(await store.toolsAsync()), namesOf(listed))
    assert.deepEqual(namesOf(store.forAgent("a").listTools()), ["mine_m"])

    const deep = listed.find((x) => x.name === "deep_deep")!
    assert.equal(depthOf(deep.inputSchema), DEPTH)
    assert.equal(store.tools().find((x) => x.name === "deep_deep")!.inputSchema, deep.inputSchema)
    const res = await store.callTool("plain_x", { ok: 1 })
    assert.equal(res.isError, false, res.output)

    const api = await serveStoreApi(store)
    t.after(() => api.close())
    const answer = await fetch(`${api.url}/for_store/list_tools`)
    const text = await answer.text()
    assert.equal(answer.status, 200, text.slice(0, 500))
    const body = JSON.parse(text)
    assert.equal(body.success, true)
    assert.deepEqual(body.metadata, { total_tools: 3, services_count: 3 })
    const served = body.data.find((x: { name: string }) => x.name === "deep_deep")
    assert.equal(served.service_name, "deep")
    assert.equal(served.client_id, "global_agent_store:deep")
    let node = served.inputSchema.properties.deep
    let depth = 0
    while (node.a !== undefined) [node, depth] = [node.a, depth + 1]
    assert.equal(depth, DEPTH)
    const plain = body.data.find((x: { name: string }) => x.name === "plain_x")
    assert.deepEqual(plain.inputSchema, store.listTools().find((x) => x.name === "plain_x")!.inputSchema)
  })
})

// ---------------------------------------------------------------- revisions

describe("each view is keyed on its own revision", () => {
  test("a change one agent cannot see rebuilds neither its listing nor its status", T, async (t) => {
    const store = openStore(t)
    const a = store.forAgent("a").addServers({ mine: local(toolsFlag(["m"])) })
    await a.listToolsAsync()
    const [tool] = a.listTools()
    const [handle] = a.tools()
    const status = a.status()
    const storeStatus = store.status()
    const version = store.version

    store.forAgent("b").addServers({ other: { command: ["node", "x.mjs"], disabled: true } })
    assert.ok(store.version > version, "the store's version still counts every change")
    assert.equal(a.listTools()[0], tool, "agent a's entries were rebuilt for agent b's change")
    assert.equal(a.tools()[0], handle, "agent a's tool handles were rebuilt for agent b's change")
    assert.equal(a.status(), status, "agent a's status was rebuilt for agent b's change")
    assert.notEqual(store.status(), storeStatus, "the store view sees agent b's service")
    assert.deepEqual(Object.keys(store.status()), ["minebya", "otherbyb"])
  })

  test("an agent is told of a change even when its view ends up looking the same", T, async (t) => {
    const store = openStore(t)
    const entry = { command: ["node", "x.mjs"], disabled: true }
    const agent = store.forAgent("a").addServers({ s: entry })
    const heard: number[] = []
    agent.onChange((v) => heard.push(v))
    // Replaced in one go: the same name, state and tools, but another service.
    agent.removeServer("s")
    agent.addServers({ s: entry })
    const told = await poll(() => heard.length > 0, 5_000)
    assert.ok(told, "the agent was not told that its service was replaced")
  })
})

describe("agent views the host lets go", () => {
  // A guest agent per task: its view brings a server, lists and calls its tools, removes
  // the server and is dropped. The store must not keep the views (or their listings).
  async function guest(store: McpStore, id: string): Promise<WeakRef<object>> {
    const view = store.forAgent(id).addServers({ scratch: local(toolsFlag(["m"])) })
    const [tool] = await view.listToolsAsync()
    const result = await view.callTool(tool.name, {})
    assert.equal(result.isError, false, result.output)
    view.removeServer("scratch")
    return new WeakRef(view)
  }

  test("are freed while the store stays open; one still held stays the same view", T, async (t) => {
    v8.setFlagsFromString("--expose-gc")
    const gc = vm.runInNewContext("gc") as () => void
    const store = openStore(t)
    const kept = store.forAgent("kept")
    const dropped: Array<WeakRef<object>> = []
    for (let i = 0; i < 3; i++) dropped.push(await guest(store, `guest-${i}`))
    // A WeakRef's target lives on until the job that made or read the ref ends: each check
    // collects before it reads, in a job of its own.
    await poll(() => (gc(), dropped.every((ref) => ref.deref() === undefined)), 10_000)
    assert.equal(dropped.filter((ref) => ref.deref() !== undefined).length, 0, "a dropped agent view is still alive")
    assert.equal(store.forAgent("kept"), kept, "a view still held is not the one forAgent returns")
  })
})
