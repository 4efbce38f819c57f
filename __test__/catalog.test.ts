// The persisted catalog and lazy servers of a store: a listing that survives a restart,
// one that went stale, lazy starts counted by processes, the catalog files' modes and
// contents, and hostile files in the catalog folder.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import { createMcpStore, listMcpTools, loadMcp, type McpStore } from "toolnexus"
import { childPids, fixture, NODE, poll, tempDir } from "./helpers.js"

const TEST_TIMEOUT = { timeout: 60_000 }
const SECRET = "catalog-secret-value-0123456789"

function openStore(t: TestContext, input: object, opts?: Parameters<typeof createMcpStore>[1]): McpStore {
  const store = createMcpStore(input, opts)
  t.after(() => store.close())
  return store
}

/** A server entry whose tools are the names in a file the test controls. */
function fileServer(t: TestContext, names: string[]) {
  const file = path.join(tempDir(t), "tools.json")
  fs.writeFileSync(file, JSON.stringify(names))
  const entry = { command: [NODE, fixture("file-tools.mjs"), file], env: { TOKEN: SECRET } }
  const starts = () => (fs.existsSync(`${file}.pids`) ? fs.readFileSync(`${file}.pids`, "utf8").trim().split("\n") : [])
  return { file, entry, starts, setTools: (next: string[]) => fs.writeFileSync(file, JSON.stringify(next)) }
}

const names = (store: McpStore) => store.listTools().map((tool) => tool.name)
const catalogFiles = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".json")) : [])

/** Lists the store's servers live and waits for their listings to reach the catalog. */
async function fill(store: McpStore, dir: string, count = 1) {
  await store.listToolsAsync()
  assert.ok(await poll(() => catalogFiles(dir).length >= count, 5_000), "the catalog was written")
}

/** A file server whose listing a first store put in a fresh catalog; the processes and
 * the server's starts counted once that store closed. */
async function catalogued(t: TestContext, tools: string[]) {
  const dir = tempDir(t)
  const server = fileServer(t, tools)
  const warm = openStore(t, { files: server.entry }, { catalogDir: dir })
  await fill(warm, dir)
  await warm.close()
  return { dir, server, before: childPids(), startsBefore: server.starts().length }
}

describe("the catalog", () => {
  test("a store lists the last listing at once, while its server starts", TEST_TIMEOUT, async (t) => {
    const dir = tempDir(t)
    const server = fileServer(t, ["alpha", "beta"])
    const first = openStore(t, { files: server.entry }, { catalogDir: dir })
    assert.deepEqual(names(first), [], "nothing listed before the first live listing")
    await fill(first, dir)
    await first.close()

    const again = openStore(t, { files: server.entry }, { catalogDir: dir })
    assert.deepEqual(names(again), ["files_alpha", "files_beta"])
    assert.equal(again.status().files.state, "initializing")
    assert.equal(again.status().files.toolCount, 2)
    // A call made on the catalog's tools waits for the server, as during a restart.
    const result = await again.callTool("files_beta", {})
    assert.deepEqual([result.isError, result.output], [false, "called beta"])
    assert.equal(again.status().files.state, "connected")
  })

  test(
    "servers start a turn after createMcpStore, not during the host's synchronous start",
    TEST_TIMEOUT,
    async (t) => {
      const { dir, server, before, startsBefore } = await catalogued(t, ["alpha"])

      const store = openStore(t, { files: server.entry }, { catalogDir: dir })
      assert.deepEqual(names(store), ["files_alpha"])
      // The host's thread stays busy with its own start: a server spawned from the runtime's
      // threads meanwhile would show up here.
      const until = Date.now() + 500
      while (Date.now() < until);
      assert.deepEqual(childPids(), before, "no process within createMcpStore's turn")
      assert.equal(store.status().files.state, "initializing")

      // Nothing here asks for the server: it starts on its own, a turn later.
      assert.ok(await poll(() => server.starts().length === startsBefore + 1, 10_000), "it started a turn later")
      await store.listToolsAsync()
      assert.equal(store.status().files.state, "connected")
      assert.equal(childPids().length, before.length + 1, "one process")
    },
  )

  test("a stale catalog is replaced by the live listing, and never trusted for a call", TEST_TIMEOUT, async (t) => {
    const dir = tempDir(t)
    const server = fileServer(t, ["alpha", "beta"])
    const first = openStore(t, { files: server.entry }, { catalogDir: dir })
    await fill(first, dir)
    await first.close()

    server.setTools(["alpha", "gamma"])
    const stale = openStore(t, { files: server.entry }, { catalogDir: dir })
    const beta = stale.tools().find((tool) => tool.name === "files_beta")
    assert.ok(beta, "the catalog shows the old tool")
    const result = await beta.execute({})
    assert.equal(result.isError, true)
    assert.equal(result.output, 'MCP server "files" no longer lists tool "beta"')
    assert.deepEqual(names(stale), ["files_alpha", "files_gamma"])
    await poll(() => fs.readFileSync(path.join(dir, catalogFiles(dir)[0]!), "utf8").includes("gamma"), 5_000)
    await stale.close()

    const later = openStore(t, { files: server.entry }, { catalogDir: dir, lazy: true })
    assert.deepEqual(names(later), ["files_alpha", "files_gamma"], "the replaced listing")
  })

  test(
    "catalog files are private and hold no secret; the default folder follows XDG_CACHE_HOME",
    TEST_TIMEOUT,
    async (t) => {
      const cache = tempDir(t)
      const previous = process.env.XDG_CACHE_HOME
      process.env.XDG_CACHE_HOME = cache
      t.after(() => (process.env.XDG_CACHE_HOME = previous))
      const server = fileServer(t, ["alpha"])
      const store = openStore(t, { files: server.entry })
      const dir = path.join(cache, "toolnexus", "catalog")
      await fill(store, dir)
      assert.equal(fs.statSync(dir).mode & 0o777, 0o700)
      for (const file of catalogFiles(dir)) {
        const full = path.join(dir, file)
        assert.equal(fs.statSync(full).mode & 0o777, 0o600, file)
        const text = fs.readFileSync(full, "utf8")
        assert.ok(text.includes("alpha"))
        assert.ok(!text.includes(SECRET), "no secret in the catalog")
      }
      assert.deepEqual(
        fs.readdirSync(dir).filter((f) => !f.endsWith(".json")),
        [],
        "no temp file left",
      )
    },
  )

  test("hostile files in the catalog folder are ignored and replaced", TEST_TIMEOUT, async (t) => {
    const dir = tempDir(t)
    const server = fileServer(t, ["alpha"])
    const first = openStore(t, { files: server.entry }, { catalogDir: dir })
    await fill(first, dir)
    await first.close()
    const [file] = catalogFiles(dir)
    const full = path.join(dir, file!)
    const key = file!.replace(".json", "")
    const hostile = [
      "[".repeat(200_000),
      "\u0000\u001b[2J not json",
      JSON.stringify({ format: "someone-else/9", key, tools: [{ name: "evil" }] }),
      JSON.stringify({ format: "toolnexus-catalog/1", key: "0".repeat(64), expiresAt: null, tools: [] }),
      JSON.stringify({ format: "toolnexus-catalog/1", key, expiresAt: null, tools: [{ name: 1 }] }),
      JSON.stringify({
        format: "toolnexus-catalog/1",
        key,
        expiresAt: 1,
        tools: [{ name: "expired", inputSchema: {} }],
      }),
    ]
    for (const text of hostile) {
      fs.writeFileSync(full, text)
      const store = openStore(t, { files: server.entry }, { catalogDir: dir, lazy: true })
      assert.deepEqual(names(store), [], text.slice(0, 40))
      assert.equal(store.status().files.state, "lazy")
      await store.close()
    }
    const replaced = openStore(t, { files: server.entry }, { catalogDir: dir })
    await fill(replaced, dir)
    await poll(() => fs.readFileSync(full, "utf8").includes("alpha"), 5_000)
    assert.ok(fs.readFileSync(full, "utf8").includes('"alpha"'), "replaced by the live listing")
  })
})

describe("lazy servers", () => {
  test("start on their first call: no process before it, one after", TEST_TIMEOUT, async (t) => {
    const { dir, server, before, startsBefore } = await catalogued(t, ["alpha"])

    const store = openStore(t, { files: { ...server.entry, lazy: true } }, { catalogDir: dir })
    await store.listToolsAsync() // the catalog answers: nothing to start
    assert.deepEqual(names(store), ["files_alpha"])
    assert.equal(store.status().files.state, "lazy")
    // An absence cannot be awaited: a process started by mistake would be there by now.
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.deepEqual(childPids(), before, "no process before the first call")
    assert.equal(server.starts().length, startsBefore)

    const result = await store.callTool("files_alpha", {})
    assert.deepEqual([result.isError, result.output], [false, "called alpha"])
    assert.equal(store.status().files.state, "connected")
    assert.equal(childPids().length, before.length + 1, "one process after it")
    assert.equal(server.starts().length, startsBefore + 1)
  })

  test("without a catalog, listToolsAsync starts them", TEST_TIMEOUT, async (t) => {
    const server = fileServer(t, ["alpha"])
    const store = openStore(t, { files: server.entry }, { catalog: false, lazy: true })
    assert.equal(store.status().files.state, "lazy")
    assert.deepEqual(names(store), [])
    assert.deepEqual(await store.listToolsAsync().then((list) => list.map((x) => x.name)), ["files_alpha"])
    assert.equal(server.starts().length, 1)
  })

  test("one that fails to start fails the call that needed it, with the reason, at once", TEST_TIMEOUT, async (t) => {
    const dir = tempDir(t)
    const server = fileServer(t, ["alpha"])
    const warm = openStore(t, { files: server.entry }, { catalogDir: dir })
    await fill(warm, dir)
    await warm.close()
    fs.writeFileSync(server.file, "not JSON: the server exits as it starts")
    const store = openStore(t, { files: { ...server.entry, lazy: true } }, { catalogDir: dir })
    assert.equal(store.status().files.state, "lazy")
    const started = Date.now()
    const call = await store.callTool("files_alpha", {})
    assert.equal(call.isError, true)
    assert.match(call.output, /^MCP server "files" is failed: .*exited \(code 1\)/)
    assert.ok(Date.now() - started < 15_000, "not after the call's timeout")
  })

  test("loadMcp and listMcpTools start them as any other server", TEST_TIMEOUT, async (t) => {
    const server = fileServer(t, ["alpha"])
    const entry = { ...server.entry, lazy: true }
    const source = await loadMcp({ files: entry })
    t.after(() => source.close())
    assert.deepEqual(source.status, { files: "connected" })
    assert.deepEqual(
      source.tools.map((tool) => tool.name),
      ["files_alpha"],
    )
    assert.equal(server.starts().length, 1)
    const inventory = await listMcpTools({ files: entry })
    assert.deepEqual(inventory.status, { files: "connected" })
    assert.equal(server.starts().length, 2)
  })
})
