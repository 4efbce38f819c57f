// A tool's members beyond name, description and inputSchema (title, annotations,
// outputSchema, icons, _meta) reach every Tool and ToolInfo as the server sent them, and
// structured results are checked against the output schema as the official client does.
// Servers: the official SDK v2 (both eras, stdio and HTTP) and v1 (2025 era).
import assert from "node:assert/strict"
import { after, before, describe, test } from "node:test"
import { createMcpStore, listMcpTools, loadMcp, serveStoreApi, type ServerConfig } from "toolnexus"
import { SECRET, WEATHER_META, startOfferHttp } from "./fixtures/offer-server.mjs"
import { fixture, NODE, openSource, toolNamed } from "./helpers.js"

const stdio = { command: [NODE, fixture("offer-server.mjs")] }
const BASE_KEYS = ["name", "description", "inputSchema"]
const EXTRA_KEYS = ["title", "annotations", "outputSchema", "icons", "_meta"]

let http: Awaited<ReturnType<typeof startOfferHttp>>
before(async () => {
  http = await startOfferHttp()
})
after(() => http.close())

const eras: Array<[string, () => ServerConfig]> = [
  ["stdio, 2026-07-28", () => stdio],
  ["stdio, 2025-11-25", () => ({ ...stdio, protocol: "2025-11-25" })],
  ["HTTP, 2026-07-28", () => ({ url: http.url })],
  ["HTTP, 2025-11-25", () => ({ url: http.url, protocol: "2025-11-25" })],
]

for (const [era, server] of eras) {
  describe(`tool members and output schemas (${era})`, () => {
    test("listMcpTools: the members as sent; a tool without them keeps its three keys", async () => {
      const inventory = await listMcpTools({ offer: server() })
      const [weather, plain] = inventory.tools.offer
      assert.deepEqual(Object.keys(weather), [...BASE_KEYS, ...EXTRA_KEYS])
      for (const key of EXTRA_KEYS) assert.deepEqual(weather[key as keyof typeof weather], WEATHER_META[key as never])
      assert.deepEqual(Object.keys(plain), BASE_KEYS)
      assert.equal("title" in plain, false)
    })

    test("loadMcp: Tool members, MCP Apps ui.resourceUri, checked structured results", async (t) => {
      const source = await openSource(t, { offer: server() })
      const weather = toolNamed(source, "offer_weather")
      assert.deepEqual(Object.keys(weather), [...BASE_KEYS, ...EXTRA_KEYS, "source", "execute"])
      assert.deepEqual(Object.keys(toolNamed(source, "offer_plain")), [...BASE_KEYS, "source", "execute"])
      assert.equal(weather.title, "Weather")
      assert.equal(weather.annotations?.readOnlyHint, true)
      assert.equal((weather._meta?.ui as { resourceUri: string }).resourceUri, "ui://weather/view.html")
      assert.deepEqual(JSON.parse(JSON.stringify(weather)).outputSchema, WEATHER_META.outputSchema)

      const ok = await weather.execute({ city: "Oslo" })
      assert.deepEqual(ok, {
        output: '{"city":"Oslo","celsius":21}',
        isError: false,
        metadata: { server: "offer", structuredContent: { city: "Oslo", celsius: 21 } },
      })
      const wrong = await weather.execute({ city: "Nowhere" })
      assert.deepEqual(wrong, {
        output:
          'MCP server "offer" tool "weather" returned structured content that does not match its output schema: at /celsius: value is not of type "number"',
        isError: true,
        metadata: { server: "offer", code: "TOOLNEXUS_OUTPUT_INVALID" },
      })
      // The server's own error results pass as they came.
      assert.deepEqual(await weather.execute({ city: "error" }), {
        output: "it broke",
        isError: true,
        metadata: { server: "offer" },
      })
      // What toolnexus composes never carries the server's data (a secret, here).
      const secret = await weather.execute({ city: "secret" })
      assert.equal(secret.isError, true)
      assert.ok(!secret.output.includes(SECRET), secret.output)
      // A plain tool without an output schema is not checked.
      assert.equal((await toolNamed(source, "offer_plain").execute({})).output, "plain")
    })
  })
}

describe("tool members in the store and its JSON API", () => {
  test("StoreToolInfo, StoreTool and list_tools carry them; calls are checked", async (t) => {
    const store = createMcpStore({ offer: stdio })
    t.after(() => store.close())
    await store.waitReady()
    const [info, plainInfo] = store.listTools()
    assert.deepEqual(Object.keys(info), [...BASE_KEYS, ...EXTRA_KEYS, "serviceName", "clientId"])
    assert.deepEqual(Object.keys(plainInfo), [...BASE_KEYS, "serviceName", "clientId"])
    assert.deepEqual(info.annotations, WEATHER_META.annotations)
    assert.ok(Object.isFrozen(info.annotations))
    // Its lazy members read as plain properties: spread, stringified, unassignable.
    assert.deepEqual({ ...info }.annotations, WEATHER_META.annotations)
    assert.deepEqual(JSON.parse(JSON.stringify(info)).inputSchema, info.inputSchema)
    assert.deepEqual(JSON.parse(JSON.stringify(plainInfo)).inputSchema, plainInfo.inputSchema)
    assert.throws(() => ((info as { inputSchema: unknown }).inputSchema = {}), TypeError)
    const [tool, plainTool] = store.tools()
    assert.deepEqual(Object.keys(tool), [...BASE_KEYS, ...EXTRA_KEYS, "source", "serviceName", "clientId", "execute"])
    assert.deepEqual(Object.keys(plainTool), [...BASE_KEYS, "source", "serviceName", "clientId", "execute"])
    assert.deepEqual(tool._meta, WEATHER_META._meta)
    const wrong = await tool.execute({ city: "Nowhere" })
    assert.equal(wrong.isError, true)
    assert.match(wrong.output, /^MCP server "offer" tool "weather" returned structured content that does not match/)
    const ok = await store.callTool("offer_weather", { city: "Rome" })
    assert.deepEqual(ok.metadata?.structuredContent, { city: "Rome", celsius: 21 })

    const api = await serveStoreApi(store)
    t.after(() => api.close())
    const body = await (await fetch(`${api.url}/for_store/list_tools`)).json()
    const [entry, plainEntry] = body.data
    assert.deepEqual(Object.keys(entry), [
      "name",
      "description",
      "service_name",
      "client_id",
      "inputSchema",
      ...EXTRA_KEYS,
    ])
    assert.deepEqual(entry.icons, WEATHER_META.icons)
    assert.deepEqual(Object.keys(plainEntry), ["name", "description", "service_name", "client_id", "inputSchema"])
  })

  test("each entry of a listing of several servers has its own tool's members, and its handle too", async (t) => {
    const store = createMcpStore({ a: stdio, b: { ...stdio, protocol: "2025-11-25" } })
    t.after(() => store.close())
    await store.waitReady()
    const listed = store.listTools()
    assert.deepEqual(
      listed.map((info) => [info.name, info.serviceName, Object.keys(info).length]),
      [
        ["a_weather", "a", BASE_KEYS.length + EXTRA_KEYS.length + 2],
        ["a_plain", "a", BASE_KEYS.length + 2],
        ["b_weather", "b", BASE_KEYS.length + EXTRA_KEYS.length + 2],
        ["b_plain", "b", BASE_KEYS.length + 2],
      ],
    )
    const bWeather = listed[2]!
    assert.deepEqual(bWeather.annotations, WEATHER_META.annotations)
    assert.deepEqual(bWeather.inputSchema, listed[0]!.inputSchema)
    const handle = store.tools()[2]!
    assert.deepEqual(handle.outputSchema, WEATHER_META.outputSchema)
    assert.deepEqual((await handle.execute({ city: "Rome" })).metadata?.server, "b")
    assert.equal(store.tools()[3]!.metadata?.server, "b")
  })
})

describe("one tool, whichever entry point lists it", () => {
  test("listMcpTools, loadMcp and a store carry the same members, key by key, and the same metadata", async (t) => {
    const entry = { ...stdio, maxOutputChars: 500, deferLoading: true }
    const inventory = await listMcpTools({ offer: entry })
    const source = await openSource(t, { offer: entry })
    const store = createMcpStore({ offer: entry })
    t.after(() => store.close())
    await store.waitReady()
    const [infos, handles] = [store.listTools(), store.tools()]
    // What each entry point adds after the listed members.
    const OWN = ["source", "serviceName", "clientId", "execute"]
    const members = (tool: object) => Object.keys(tool).filter((key) => !OWN.includes(key))
    assert.equal(inventory.tools.offer.length, 2)
    for (const listed of inventory.tools.offer) {
      const name = `offer_${listed.name}`
      const loaded = toolNamed(source, name)
      const info = infos.find((x) => x.name === name)
      const handle = handles.find((x) => x.name === name)
      assert.ok(info && handle, name)
      for (const tool of [loaded, info, handle]) {
        assert.deepEqual(members(tool), Object.keys(listed), name)
        for (const key of members(listed).filter((key) => key !== "name" && key !== "inputSchema")) {
          assert.deepEqual(tool[key as keyof typeof tool], listed[key as keyof typeof listed], `${name}.${key}`)
        }
        assert.deepEqual(tool.inputSchema.properties, listed.inputSchema.properties, name)
      }
      const metadata = { server: "offer", tool: listed.name, maxOutputChars: 500, deferLoading: true }
      assert.deepEqual(loaded.metadata, metadata)
      assert.deepEqual(handle.metadata, { ...metadata, clientId: info.clientId })
      assert.equal(handle.inputSchema, info.inputSchema)
    }
  })
})
