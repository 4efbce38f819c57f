// Contract § Loading: connecting, listing, naming, filtering, failing and aborting.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test } from "node:test"
import { listMcpTools, loadMcp } from "toolnexus"
import {
  assertCleanExit,
  DEFAULT_TIMEOUT,
  exitAtOnce,
  failureLines,
  FAST,
  linesWith,
  local,
  names,
  openSource,
  runNode,
  SHORT_TIMEOUT,
  sleep,
  tempDir,
  timed,
  toolsFlag,
} from "./helpers.js"

describe("order", () => {
  // "slow" answers tools/list last, so completion order differs from config order.
  const config = () => ({
    slow: local("--list-delay=700", toolsFlag(["b", "a"])),
    off: { ...local(), enabled: false },
    broken: exitAtOnce(),
    fast: local(toolsFlag(["d", "c"])),
  })
  const status = { slow: "connected", off: "disabled", broken: "failed", fast: "connected" }

  test("loadMcp: status in config order; tools by server in config order, then in listed order", async (t) => {
    const source = await openSource(t, config())
    assert.deepEqual(Object.entries(source.status), Object.entries(status))
    assert.deepEqual(names(source), ["slow_b", "slow_a", "fast_d", "fast_c"])
  })

  test("listMcpTools: the same order, per server", async () => {
    const inv = await listMcpTools(config())
    assert.deepEqual(Object.entries(inv.status), Object.entries(status))
    assert.deepEqual(Object.keys(inv.tools), ["slow", "fast"])
    assert.deepEqual(
      inv.tools.slow.map((x) => x.name),
      ["b", "a"],
    )
    assert.deepEqual(
      inv.tools.fast.map((x) => x.name),
      ["d", "c"],
    )
  })

  test("servers connect in parallel", async (t) => {
    const delay = 3_000
    const { value: source, ms } = await timed(() =>
      openSource(t, {
        a: local(`--list-delay=${delay}`),
        b: local(`--list-delay=${delay}`),
        c: local(`--list-delay=${delay}`),
      }),
    )
    assert.deepEqual(source.status, { a: "connected", b: "connected", c: "connected" })
    assert.ok(ms < 2.5 * delay, `three servers each needing ${delay} ms took ${ms} ms together`)
  })
})

describe("tool shape", () => {
  const schemas = {
    full: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    noProps: { type: "object" },
    noType: { properties: { n: { type: "number" } } },
  }
  const tools = [
    { name: "full", description: "Has a full schema", inputSchema: schemas.full },
    { name: "noProps", description: "No properties", inputSchema: schemas.noProps },
    { name: "noType", description: "No type", inputSchema: schemas.noType },
  ]
  const config = () => ({ srv: local(toolsFlag(tools)) })

  test("loadMcp: prefixed name, description, normalised closed schema, source mcp", async (t) => {
    const source = await openSource(t, config())
    const shape = source.tools.map(({ name, description, inputSchema, source: from }) => ({
      name,
      description,
      inputSchema,
      source: from,
    }))
    assert.deepEqual(shape, [
      {
        name: "srv_full",
        description: "Has a full schema",
        inputSchema: { ...schemas.full, additionalProperties: false },
        source: "mcp",
      },
      {
        name: "srv_noProps",
        description: "No properties",
        inputSchema: { type: "object", properties: {}, additionalProperties: false },
        source: "mcp",
      },
      {
        name: "srv_noType",
        description: "No type",
        inputSchema: { type: "object", properties: { n: { type: "number" } }, additionalProperties: false },
        source: "mcp",
      },
    ])
    for (const tool of source.tools) assert.equal(typeof tool.execute, "function")
  })

  test("loadMcp: inputSchema reads like a plain property: spread, stringified, kept and assignable", async (t) => {
    const source = await openSource(t, config())
    const [full] = source.tools
    const expected = { ...schemas.full, additionalProperties: false }
    assert.deepEqual(Object.keys(full), ["name", "description", "inputSchema", "source", "execute"])
    assert.deepEqual({ ...full }.inputSchema, expected)
    assert.deepEqual(JSON.parse(JSON.stringify(full)).inputSchema, expected)
    assert.equal(full.inputSchema, full.inputSchema, "parsed once, then the same object")
    ;(full.inputSchema.required as string[]).push("extra")
    assert.deepEqual(full.inputSchema.required, ["q", "extra"])
    const replaced = { type: "object", properties: {} }
    full.inputSchema = replaced
    assert.equal(full.inputSchema, replaced)
  })

  test("listMcpTools: original names, schema with type and properties but nothing added", async () => {
    const inv = await listMcpTools(config())
    assert.deepEqual(inv.tools.srv, [
      { name: "full", description: "Has a full schema", inputSchema: schemas.full },
      { name: "noProps", description: "No properties", inputSchema: { type: "object", properties: {} } },
      {
        name: "noType",
        description: "No type",
        inputSchema: { type: "object", properties: { n: { type: "number" } } },
      },
    ])
    // Schemas are parsed when read, and still plain data to JSON.stringify.
    assert.deepEqual(JSON.parse(JSON.stringify(inv)).tools.srv[0].inputSchema, schemas.full)
  })

  test("names are sanitize(server) + '_' + sanitize(tool)", async (t) => {
    const source = await openSource(t, {
      "my.srv": local(toolsFlag(["do it"])),
      "a-b_c": local(toolsFlag(["x/y:z", "ok-name_1", "ünï"])),
    })
    assert.deepEqual(names(source), ["my_srv_do_it", "a-b_c_x_y_z", "a-b_c_ok-name_1", "a-b_c__n_"])
    const inv = await listMcpTools({ "my.srv": local(toolsFlag(["do it"])) })
    assert.deepEqual(Object.keys(inv.tools), ["my.srv"])
    assert.deepEqual(
      inv.tools["my.srv"].map((x) => x.name),
      ["do it"],
    )
  })
})

describe("tools allowlist", () => {
  const all = toolsFlag(["a", "b", "c", "d"])
  const config = () => ({
    absent: local(all),
    empty: { ...local(all), tools: {} },
    onlyTrue: { ...local(all), tools: { c: true, a: true } },
    mixed: { ...local(all), tools: { a: true, b: false } },
    onlyFalse: { ...local(all), tools: { b: false, d: false } },
  })

  test("loadMcp applies it: absent/empty = all, any true = only those, only false = all but those", async (t) => {
    const source = await openSource(t, config())
    const byServer = (server: string) => names(source).filter((n) => n.startsWith(`${server}_`))
    assert.deepEqual(byServer("absent"), ["absent_a", "absent_b", "absent_c", "absent_d"])
    assert.deepEqual(byServer("empty"), ["empty_a", "empty_b", "empty_c", "empty_d"])
    assert.deepEqual(byServer("onlyTrue"), ["onlyTrue_a", "onlyTrue_c"], "server order, not map order")
    assert.deepEqual(byServer("mixed"), ["mixed_a"])
    assert.deepEqual(byServer("onlyFalse"), ["onlyFalse_a", "onlyFalse_c"])
  })

  test("listMcpTools ignores it", async () => {
    const inv = await listMcpTools(config())
    for (const server of Object.keys(config())) {
      assert.deepEqual(
        inv.tools[server].map((x) => x.name),
        ["a", "b", "c", "d"],
        server,
      )
    }
  })

  test("a name matching no tool is ignored with exactly one warning", async () => {
    const run = await runNode(`
      import { loadMcp } from "toolnexus"
      const source = await loadMcp(${JSON.stringify({
        pick: { ...local(toolsFlag(["a", "b"])), tools: { a: true, nosuch_tool_x: true } },
        drop: { ...local(toolsFlag(["a", "b"])), tools: { a: false, ghost_tool_y: false } },
      })})
      console.log(JSON.stringify(source.tools.map((t) => t.name)))
      await source.close()
    `)
    assertCleanExit(run)
    assert.deepEqual(JSON.parse(run.stdout), ["pick_a", "drop_b"])
    assert.equal(linesWith(run.stderr, "nosuch_tool_x").length, 1, `stderr:\n${run.stderr}`)
    assert.equal(linesWith(run.stderr, "ghost_tool_y").length, 1, `stderr:\n${run.stderr}`)
  })
})

describe("provider-safe names", () => {
  const SAFE = /^[a-zA-Z0-9_-]{1,64}$/
  const recorded = (file: string) =>
    fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.event === "started")

  test("two tools that sanitize to one name both get distinct hashed names, without a warning, each calling its own tool", async (t) => {
    const record = path.join(tempDir(t), "calls.jsonl")
    const config = { x: local(`--record=${record}`, toolsFlag(["a.b", "a_b", "c"])) }
    const run = await runNode(`
      import { loadMcp } from "toolnexus"
      const source = await loadMcp(${JSON.stringify(config)})
      for (const tool of source.tools) await tool.execute({})
      console.log(JSON.stringify(source.tools.map((t) => [t.name, t.metadata])))
      await source.close()
    `)
    assertCleanExit(run)
    assert.equal(run.stderr, "", "no warning: no two tools share a name")
    const tools: Array<[string, { server: string; tool: string }]> = JSON.parse(run.stdout)
    assert.deepEqual(
      tools.map(([, m]) => m),
      [
        { server: "x", tool: "a.b" },
        { server: "x", tool: "a_b" },
        { server: "x", tool: "c" },
      ],
    )
    const [ab1, ab2, c] = tools.map(([n]) => n)
    assert.equal(c, "x_c", "a name nothing else takes stays server_tool")
    assert.match(ab1!, /^x_a_b_[0-9a-f]{8}$/)
    assert.match(ab2!, /^x_a_b_[0-9a-f]{8}$/)
    assert.notEqual(ab1, ab2)
    assert.deepEqual(
      recorded(record).map((e) => e.tool),
      ["a.b", "a_b", "c"],
      "each name calls the tool it was made from",
    )

    // The same names on every load, whatever order the server lists the tools in.
    const again = await openSource(t, { x: local(toolsFlag(["c", "a_b", "a.b"])) })
    assert.deepEqual(names(again), [c, ab2, ab1])
  })

  test("a name over 64 characters is shortened to a unique, stable, callable one; metadata keeps the originals", async (t) => {
    const server = "a-very-long-server-name-for-the-enterprise-knowledge-base"
    const longTool = "search_every_document_in_the_knowledge_base_by_semantic_similarity"
    const config = { [server]: local(toolsFlag([longTool, `${longTool}_v2`, "echo"])) }
    const source = await openSource(t, config)
    const [first, second, echo] = source.tools
    for (const tool of source.tools) assert.match(tool.name, SAFE, tool.name)
    assert.equal(echo!.name, `${server}_echo`)
    assert.notEqual(first!.name, second!.name)
    // The README's example, to the character: the rule is the documented one, in every process.
    assert.equal(first!.name, "a-very-long-server-n_search_every_document_in_the_knowl_37f05e61")
    assert.deepEqual(first!.metadata, { server, tool: longTool })
    assert.deepEqual(
      Object.keys(first!),
      ["name", "description", "inputSchema", "source", "execute"],
      "metadata is not an own enumerable key",
    )
    const res = await first!.execute({ q: 1 })
    assert.deepEqual([res.isError, JSON.parse(res.output)], [false, { q: 1 }])
    const again = await openSource(t, config)
    assert.deepEqual(names(again), names(source))
  })
})

describe("pagination", () => {
  const letters = ["a", "b", "c", "d", "e", "f", "g"]

  test("tools/list follows nextCursor across pages", async (t) => {
    const config = { paged: local("--page-size=3", toolsFlag(letters)) }
    const source = await openSource(t, config)
    assert.equal(source.status.paged, "connected")
    assert.deepEqual(
      names(source),
      letters.map((l) => `paged_${l}`),
    )
    const inv = await listMcpTools(config)
    assert.deepEqual(
      inv.tools.paged.map((x) => x.name),
      letters,
    )
  })

  test("1000 pages are fine; a repeated cursor or endless pages fail that server only", async (t) => {
    const source = await openSource(t, {
      thousand: local("--pages=1000"),
      repeat: { ...local("--repeat-cursor"), timeout: 5_000 },
      endless: { ...local("--pages=inf"), timeout: 5_000 },
      good: local(toolsFlag(["x"])),
    })
    assert.deepEqual(source.status, { thousand: "connected", repeat: "failed", endless: "failed", good: "connected" })
    const thousand = names(source).filter((n) => n.startsWith("thousand_"))
    assert.equal(thousand.length, 1000)
    assert.equal(thousand[999], "thousand_t999")
    assert.deepEqual(
      names(source).filter((n) => !n.startsWith("thousand_")),
      ["good_x"],
    )
  })
})

describe("failures", () => {
  test("a server that never answers tools/list fails at its timeout; the others connect", async (t) => {
    const { value: source, ms } = await timed(() =>
      openSource(t, { mute: { ...local("--hang-list"), timeout: SHORT_TIMEOUT }, good: local(toolsFlag(["x"])) }),
    )
    assert.deepEqual(source.status, { mute: "failed", good: "connected" })
    assert.deepEqual(names(source), ["good_x"])
    assert.ok(ms < FAST, `took ${ms} ms with a ${SHORT_TIMEOUT} ms timeout`)
  })

  test("a server that never answers initialize fails at its timeout", async () => {
    const { value: inv, ms } = await timed(() =>
      listMcpTools({ mute: { ...local("--hang-init"), timeout: SHORT_TIMEOUT }, good: local(toolsFlag(["x"])) }),
    )
    assert.deepEqual(inv.status, { mute: "failed", good: "connected" })
    assert.ok(ms < FAST, `took ${ms} ms with a ${SHORT_TIMEOUT} ms timeout`)
  })

  test("a server that exits at once, or cannot be spawned, fails well before the default timeout", async (t) => {
    const { value: source, ms } = await timed(() =>
      openSource(t, {
        bad: exitAtOnce(),
        nobin: { command: ["/no/such/binary-toolnexus"] },
        good: local(toolsFlag(["x"])),
      }),
    )
    assert.deepEqual(source.status, { bad: "failed", nobin: "failed", good: "connected" })
    assert.ok(ms < FAST, `took ${ms} ms; the default timeout is ${DEFAULT_TIMEOUT} ms`)
  })

  test("a failed server prints one stderr line naming it, with the exit code", async () => {
    const run = await runNode(`
      import { loadMcp } from "toolnexus"
      const source = await loadMcp(${JSON.stringify({ bad: exitAtOnce(), good: local(toolsFlag(["x"])) })})
      console.log(JSON.stringify(source.status))
      await source.close()
    `)
    assertCleanExit(run)
    assert.deepEqual(JSON.parse(run.stdout), { bad: "failed", good: "connected" })
    const lines = failureLines(run.stderr, "bad")
    assert.equal(lines.length, 1, `stderr:\n${run.stderr}`)
    assert.match(lines[0].slice(lines[0].indexOf("failed:")), /\b3\b/, "the line should carry exit code 3")
    assert.deepEqual(failureLines(run.stderr, "good"), [])
  })
})

describe("opts.signal", () => {
  for (const [label, fn] of [
    ["loadMcp", loadMcp],
    ["listMcpTools", listMcpTools],
  ] as const) {
    test(`${label}: firing mid-load rejects with signal.reason, promptly`, async () => {
      const signal = AbortSignal.timeout(300)
      const { value: err, ms } = await timed(() =>
        fn({ mute: local("--hang-list"), good: local() }, { signal }).then(
          (result) => assert.fail(`resolved: ${JSON.stringify(result.status)}`),
          (e: unknown) => e,
        ),
      )
      assert.ok(err instanceof DOMException, `rejected with ${String(err)}`)
      assert.equal(err.name, "TimeoutError")
      assert.equal(err, signal.reason, "rejected with a different object than signal.reason")
      assert.ok(ms < 3_000, `rejected after ${ms} ms for a 300 ms signal`)
    })

    test(`${label}: an already aborted signal rejects with its reason and spawns nothing`, async (t) => {
      const marker = path.join(tempDir(t), "spawned")
      const controller = new AbortController()
      const reason = new Error("stop before starting")
      controller.abort(reason)
      await assert.rejects(
        fn({ s: local(`--marker=${marker}`) }, { signal: controller.signal }),
        (err) => err === reason,
      )
      await sleep(500) // an absence cannot be awaited: a server spawned by mistake has written its marker by now
      assert.equal(fs.existsSync(marker), false, "a server was spawned for an aborted call")
    })
  }
})
