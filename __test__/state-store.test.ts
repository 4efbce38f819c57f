// A host's own StateStore behind the fleet (the interface a DynamoDB, Postgres or
// key-value service user implements): two stores of one process share their registry
// through it, a failing one leaves the store working and says why, and the state option
// is checked.
import assert from "node:assert/strict"
import { test } from "node:test"
import { createMcpStore, loadMcp, serveStoreApi, type McpStore } from "toolnexus"
import { memoryState } from "./fixtures/memory-state.mjs"
import { local, poll, tempDir } from "./helpers.js"

const T = { timeout: 30_000 }
const KEY = "ab".repeat(32)

test("stores on one StateStore share servers added at run time and list each other", T, async (t) => {
  const { store: state, values } = memoryState()
  const a: McpStore = createMcpStore({}, { state: { store: state, key: KEY }, catalogDir: tempDir(t) })
  const b: McpStore = createMcpStore({}, { state, catalogDir: tempDir(t) })
  t.after(() => Promise.all([a.close(), b.close()]))
  assert.ok(await poll(() => a.sharedState().status === "connected", 5_000), "a reached its state")
  assert.deepEqual(a.sharedState(), { status: "connected", namespace: "default", signIns: true })
  a.addServers({ echo: local() })
  assert.ok(await poll(() => b.status().echo, 2_000), "b has the server a added")
  assert.ok(await poll(() => b.listTools().length > 0, 10_000), "b's own copy of it connects")
  assert.ok([...values.keys()].every((key) => key.startsWith("toolnexus:default:")))
  const instances = await a.instances()
  assert.equal(instances.length, 2)
  assert.ok(instances.every((i) => i.pid === process.pid && i.host.length > 0))
  assert.ok(b.removeServer("echo"))
  assert.ok(await poll(() => !a.status().echo, 2_000), "a's copy is gone with b's removal")
})

test("a StateStore that fails leaves the store working and says why", T, async (t) => {
  const { store: state, control } = memoryState()
  control.failing = true
  const store = createMcpStore(
    { echo: local() },
    { state: { store: state, namespace: "down" }, catalogDir: tempDir(t) },
  )
  t.after(() => store.close())
  await store.waitReady()
  assert.equal(store.status().echo.state, "connected")
  const health = await poll(
    () => store.sharedState().reason?.includes("the database is down") && store.sharedState(),
    5_000,
  )
  assert.ok(health, `unavailable with the store's reason: ${JSON.stringify(store.sharedState())}`)
  assert.equal(health.status, "unavailable")
  const echo = store.tools().find((tool) => tool.name === "echo_echo")
  assert.ok(echo)
  const result = await echo.execute({ text: "hi" })
  assert.equal(result.isError, false)
  control.failing = false
  assert.ok(await poll(() => store.sharedState().status === "connected", 5_000), "connected once it answers")
})

test("a state option that cannot be used is refused at once, naming what is wrong", () => {
  assert.throws(() => createMcpStore({}, { state: 42 as never }), /state must be/)
  assert.throws(() => createMcpStore({}, { state: { url: "" } }), /state\.url/)
  assert.throws(() => createMcpStore({}, { state: "http://x" }), /not a redis:\/\/ or rediss:\/\/ URL/)
  assert.throws(() => createMcpStore({}, { state: { url: "redis://127.0.0.1:1", namespace: "a:b" } }), /namespace/)
  const secret = "zz".repeat(32)
  assert.throws(
    () => createMcpStore({}, { state: { url: "redis://127.0.0.1:1", key: secret } }),
    (error: Error) => error.message.includes("64 hex digits") && !error.message.includes(secret),
  )
  assert.throws(
    () => createMcpStore({}, { state: { url: "redis://me:hunter2@127.0.0.1:1", namespace: "x y" } }),
    (error: Error) => !error.message.includes("hunter2"),
  )
})

test("serveStoreApi shows the fleet's health: the shared state and the live instances", T, async (t) => {
  const { store: state } = memoryState()
  const a = createMcpStore({ echo: local() }, { state, catalogDir: tempDir(t) })
  const b = createMcpStore({}, { state, catalogDir: tempDir(t) })
  t.after(() => Promise.all([a.close(), b.close()]))
  await a.waitReady()
  assert.ok(await poll(() => a.sharedState().status === "connected", 5_000))
  const api = await serveStoreApi(a)
  t.after(() => api.close())
  const fleet = async () => (await fetch(`${api.url}/for_store/fleet`)).json()
  let body = await fleet()
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; body = await fleet()) {
    const { instances } = body.data
    if (
      instances.length === 2 &&
      instances.some((i: { servers: Record<string, string> }) => i.servers.echo === "connected")
    )
      break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.equal(body.data.instances.length, 2, JSON.stringify(body))
  assert.equal(body.success, true)
  assert.equal(body.data.shared_state.status, "connected")
  const solo = createMcpStore({})
  const soloApi = await serveStoreApi(solo)
  t.after(() => Promise.all([soloApi.close(), solo.close()]))
  const alone = await (await fetch(`${soloApi.url}/for_store/fleet`)).json()
  assert.equal(alone.data.shared_state.status, "local")
  assert.equal(alone.data.instances.length, 1)
})

test("loadMcp on a state keeps its listings in the fleet's catalog, as a store would", T, async (t) => {
  const { store: state, values } = memoryState()
  const source = await loadMcp({ s: local() }, { state })
  t.after(() => source.close())
  const catalog = await poll(
    () => [...values.keys()].find((key) => key.startsWith("toolnexus:default:catalog:")),
    5_000,
  )
  assert.ok(catalog, `a catalog document: ${[...values.keys()].join(", ")}`)
  const store = createMcpStore({ s: local() }, { state, lazy: true, catalogDir: tempDir(t) })
  t.after(() => store.close())
  const listed = await poll(() => store.listTools().length === source.tools.length && store.listTools(), 5_000)
  assert.ok(listed, "the store shows what loadMcp listed")
  assert.deepEqual(
    listed.map((tool) => tool.name),
    source.tools.map((tool) => tool.name),
  )
  assert.equal(store.status().s?.state, "lazy", "from the catalog, with no server started")
})
