// Resources, resource templates, prompts and completions of loadMcp's source and of store
// views, against a server written with the official SDK v2, in both eras over stdio and
// HTTP: every entry as sent with its `server`, contents and messages as sent, a server
// without the capability answers an empty list, failures reject naming the server.
import assert from "node:assert/strict"
import { after, before, describe, test } from "node:test"
import { createMcpStore, type McpSource, type ServerConfig } from "toolnexus"
import { BLOB, NOTE_TEXT, SECRET, startOfferHttp } from "./fixtures/offer-server.mjs"
import { fixture, NODE, openSource, poll } from "./helpers.js"

const stdio = { command: [NODE, fixture("offer-server.mjs")], env: { OFFER_TOKEN: SECRET } }
const toolsOnly = { command: [NODE, fixture("offer-server.mjs"), "--tools-only"] }

let http: Awaited<ReturnType<typeof startOfferHttp>>
before(async () => {
  http = await startOfferHttp()
})
after(() => http.close())

const eras: Array<[string, () => ServerConfig]> = [
  ["stdio, 2026-07-28", () => stdio],
  ["stdio, 2025-11-25", () => ({ ...stdio, protocol: "2025-11-25" })],
  ["HTTP, 2026-07-28", () => ({ url: http.url, headers: { "x-token": SECRET } })],
  ["HTTP, 2025-11-25", () => ({ url: http.url, headers: { "x-token": SECRET }, protocol: "2025-11-25" })],
]

/** What every source and view must answer for the fixture's server named `offer`. */
async function assertOffers(
  source: Pick<
    McpSource,
    "listResources" | "listResourceTemplates" | "readResource" | "listPrompts" | "getPrompt" | "complete"
  >,
) {
  const resources = await source.listResources("offer")
  assert.deepEqual(
    resources.map((r) => [r.uri, r.server]),
    [
      ["note://one", "offer"],
      ["bin://bytes", "offer"],
      ["ui://weather/view.html", "offer"],
    ],
  )
  assert.equal(resources[0].title, "Note")
  assert.deepEqual(await source.listResources(), [...resources])
  const [template] = await source.listResourceTemplates("offer")
  assert.deepEqual(template, { name: "city", uriTemplate: "city://{name}", description: "A city", server: "offer" })

  // Contents as sent: the control character and the secret are the server's data.
  const note = await source.readResource("offer", "note://one")
  assert.deepEqual(note.contents, [{ uri: "note://one", mimeType: "text/plain", text: NOTE_TEXT }])
  // The same result in both eras: the 2026-07-28 `resultType` is the protocol's business.
  assert.equal("resultType" in note, false)
  const blob = await source.readResource("offer", "bin://bytes")
  assert.equal(blob.contents[0].blob, BLOB)
  const view = await source.readResource("offer", "ui://weather/view.html")
  assert.equal(view.contents[0].text, "<p>sunny</p>")
  assert.equal((await source.readResource("offer", "city://Rome")).contents[0].text, "city Rome")

  const [prompt] = await source.listPrompts()
  assert.equal(prompt.name, "greet")
  assert.equal(prompt.server, "offer")
  assert.deepEqual(
    prompt.arguments?.map((a) => a.name),
    ["name", "lang"],
  )
  const greeting = await source.getPrompt("offer", "greet", { name: "Ann", lang: "es" })
  assert.equal(greeting.description, "A greeting")
  assert.deepEqual(greeting.messages, [{ role: "user", content: { type: "text", text: "Say hello to Ann in es" } }])
  const langs = await source.complete("offer", { type: "ref/prompt", name: "greet" }, { name: "lang", value: "e" })
  assert.deepEqual(langs.completion.values, ["en", "es"])
  const cities = await source.complete(
    "offer",
    { type: "ref/resource", uri: "city://{name}" },
    { name: "name", value: "Os" },
  )
  assert.deepEqual(cities.completion.values, ["Oslo", "Osaka"])

  // Failures reject naming the server, with its secrets hidden; an unknown name at once.
  await assert.rejects(source.readResource("offer", `note://${SECRET}`), (error: Error) => {
    assert.match(error.message, /^MCP server "offer" /)
    assert.ok(!error.message.includes(SECRET), error.message)
    return true
  })
  await assert.rejects(source.getPrompt("offer", "nope"), /^Error: MCP server "offer" /)
  await assert.rejects(source.listResources("nope"), /no (connected )?MCP server "nope"/)
}

for (const [era, server] of eras) {
  describe(`resources, prompts, completions (${era})`, () => {
    test("loadMcp's source", async (t) => {
      const source = await openSource(t, { offer: server(), bare: toolsOnly })
      assert.deepEqual(Object.keys(source), ["tools", "status", "close"])
      await assertOffers(source)
      // A server that declares none of them answers empty, not an error.
      assert.deepEqual(await source.listResources("bare"), [])
      assert.deepEqual(await source.listResourceTemplates("bare"), [])
      assert.deepEqual(await source.listPrompts("bare"), [])
      const none = await source.complete("bare", { type: "ref/prompt", name: "x" }, { name: "a", value: "" })
      assert.deepEqual(none, { completion: { values: [] } })
    })
  })
}

describe("resources, prompts, completions of store views", () => {
  test("the store view and an agent's view", async (t) => {
    const store = createMcpStore({ offer: stdio })
    t.after(() => store.close())
    store.forAgent("a1").addServers({ mine: toolsOnly })
    // Bounded waits; a loaded machine may take longer to start the servers.
    const up = () => Object.values(store.status()).every((s) => s.state === "connected")
    assert.ok(await poll(up, 20_000), JSON.stringify(store.status()))
    await assertOffers(store)
    assert.deepEqual(await store.forAgent("a1").listResources(), [])
    await assert.rejects(store.forAgent("a1").listPrompts("offer"), /no MCP server "offer" in this view/)
  })
})

describe("a server written with the official SDK v1 (2025 era)", () => {
  test("tool members, resources and prompts", async (t) => {
    const source = await openSource(t, { v1: { command: [NODE, fixture("offer-v1.mjs")] } })
    const [weather] = source.tools
    assert.equal(weather.title, "Weather")
    assert.deepEqual(weather.annotations, { readOnlyHint: true })
    assert.equal((weather._meta?.ui as { resourceUri: string }).resourceUri, "ui://weather/view.html")
    assert.equal(weather.outputSchema?.type, "object")
    const result = await weather.execute({ city: "Oslo" })
    assert.deepEqual(result.metadata?.structuredContent, { city: "Oslo", celsius: 21 })
    assert.deepEqual(
      (await source.listResources()).map((r) => [r.uri, r.server]),
      [["note://one", "v1"]],
    )
    assert.equal((await source.readResource("v1", "note://one")).contents[0].text, "v1 note")
    const prompt = await source.getPrompt("v1", "greet", { name: "Ann" })
    assert.deepEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "Hello Ann" } }])
    assert.deepEqual((await source.listResourceTemplates("v1")).length, 0)
  })
})
