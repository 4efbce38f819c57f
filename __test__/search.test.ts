// Tool search: ranking quality on a catalog of real and generated tool definitions,
// callable results, the meta-tools, and `modelTools` switching on its threshold.
import assert from "node:assert/strict"
import { describe, test, type TestContext } from "node:test"
import { createMcpStore, loadMcp, type McpSource } from "toolnexus"
import { QUERIES } from "./search/tools.mjs"
import { fixture, local, NODE, toolsFlag } from "./helpers.js"
// The native layer, for the index's size; its generated declarations are not the public
// types the suite checks: loaded untyped.
const native = await import(String("../binding.js"))

const TEST_TIMEOUT = { timeout: 60_000 }
const catalogServer = (min?: number) => ({
  command: [NODE, fixture("../search/server.mjs"), ...(min ? [String(min)] : [])],
})

async function open(t: TestContext, config: object): Promise<McpSource> {
  const source = await loadMcp(config)
  t.after(() => source.close())
  return source
}

describe("searchTools", () => {
  test("the index costs less memory than the schemas' own text", TEST_TIMEOUT, async () => {
    const store = new native.NativeStore(
      { json: JSON.stringify({ all: catalogServer() }) },
      { catalog: false },
      () => {},
      null,
      null,
    )
    try {
      await store.waitInitializing(null)
      const listing = store.listTools(null)
      const count = JSON.parse(listing.json()).tools.length / 3
      assert.ok(count >= 2_000, `${count} tools`)
      const schemas = Array.from({ length: count }, (_, i) => listing.inputSchema(i)).join("")
      const index = store.searchIndexBytes(null)
      assert.ok(index > 0, "an index was built")
      assert.ok(index < Buffer.byteLength(schemas), `index ${index} B, schemas ${Buffer.byteLength(schemas)} B`)
    } finally {
      await store.close()
    }
  })

  test("finds the intended tool in the top 5 for at least 90% of the queries", TEST_TIMEOUT, async (t) => {
    const source = await open(t, { all: catalogServer() })
    assert.ok(source.tools.length >= 2_000, `${source.tools.length} tools`)
    assert.ok(QUERIES.length >= 50)
    const missed = QUERIES.filter(
      ([query, tool]) => !source.searchTools(query, { limit: 5 }).some((found) => found.name === `all_${tool}`),
    )
    const share = 1 - missed.length / QUERIES.length
    assert.ok(share >= 0.9, `top-5 ${(share * 100).toFixed(1)}%; missed: ${JSON.stringify(missed)}`)
  })

  test("returns callable tools, best first, within the limit, in store views too", TEST_TIMEOUT, async (t) => {
    const tools = toolsFlag([
      { name: "read_file", description: "Read a file" },
      { name: "write_file", description: "Write a file" },
      { name: "send_email", description: "Send an email" },
    ])
    const source = await open(t, { fs: local(tools) })
    const found = source.searchTools("write a file")
    assert.deepEqual(
      found.map((tool) => tool.name),
      ["fs_write_file", "fs_read_file"],
    )
    assert.equal(found[0], source.tools[1], "the source's own handles")
    assert.deepEqual(source.searchTools("file", { limit: 1 }).length, 1)
    assert.deepEqual(source.searchTools("zebra"), [])
    assert.throws(() => source.searchTools("file", { limit: -1 }), TypeError)

    const store = createMcpStore({ fs: local(tools) }, { catalog: false })
    t.after(() => store.close())
    store.forAgent("mail").addServers({ post: local(tools) })
    await store.listToolsAsync()
    await store.forAgent("mail").listToolsAsync()
    const inStore = store.searchTools("send email")
    assert.deepEqual(
      inStore.map((tool) => tool.name),
      ["fs_send_email", "postbymail_send_email"],
    )
    const agent = store.forAgent("mail").searchTools("send email")
    assert.deepEqual(
      agent.map((tool) => tool.name),
      ["post_send_email"],
      "an agent searches only its own",
    )
    const result = await agent[0]!.execute({ text: "hi" })
    assert.equal(result.isError, false)
    assert.equal(result.metadata?.server, "post")
  })
})

describe("meta-tools and modelTools", () => {
  test("search, describe and call a tool through the meta-tools", TEST_TIMEOUT, async (t) => {
    const source = await open(t, { all: catalogServer() })
    const [search, describe_, call] = source.metaTools()
    assert.deepEqual([search!.name, describe_!.name, call!.name], ["search_tools", "describe_tool", "call_tool"])
    const hits = JSON.parse((await search!.execute({ query: "open a new issue on GitHub", limit: 3 })).output)
    assert.equal(hits.length, 3)
    assert.equal(hits[0].name, "all_github_create_issue")
    assert.equal(hits[0].description, "Create a new issue in a GitHub repository")
    const schema = JSON.parse((await describe_!.execute({ name: "all_github_create_issue" })).output)
    assert.deepEqual(Object.keys(schema.inputSchema.properties), ["owner", "repo", "title", "body"])
    const result = await call!.execute({ name: "all_github_create_issue", arguments: { title: "x" } })
    assert.deepEqual([result.isError, result.output], [false, "called github_create_issue"])
    const unknown = await call!.execute({ name: "nope" })
    assert.equal(unknown.isError, true)
    assert.match(unknown.output, /no tool named "nope"/)
  })

  test("auto hands out the meta-tools only above the threshold", TEST_TIMEOUT, async (t) => {
    const source = await open(t, { all: catalogServer() })
    const all = source.tools.length
    assert.equal(source.modelTools().length, 3, "2,000 schemas exceed the default")
    assert.equal(source.modelTools({ maxSchemaChars: 100_000_000 }).length, all)
    assert.equal(source.modelTools({ mode: "all" }).length, all)
    const small = await open(t, { s: local() })
    assert.equal(small.modelTools().length, small.tools.length, "a small listing is handed out whole")
    assert.deepEqual(
      small.modelTools({ maxSchemaChars: 10 }).map((tool) => tool.name),
      ["search_tools", "describe_tool", "call_tool"],
    )
    assert.deepEqual(
      small.modelTools({ mode: "meta" }).map((tool) => tool.name),
      ["search_tools", "describe_tool", "call_tool"],
    )
    assert.throws(() => small.modelTools({ mode: "some" as "all" }), TypeError)

    const store = createMcpStore({ s: local() }, { catalog: false })
    t.after(() => store.close())
    await store.listToolsAsync()
    assert.equal(store.modelTools().length, store.tools().length)
    assert.equal(store.modelTools({ maxSchemaChars: 10 }).length, 3)
  })
})
