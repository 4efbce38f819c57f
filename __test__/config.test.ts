// Contract § Config: the shapes of an mcp.json and how each entry is read.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { after, before, describe, test } from "node:test"
import { listMcpTools, loadMcp, parseMcpConfig } from "toolnexus"
import { startHttpServer } from "./fixtures/http-server.mjs"
import {
  exitAtOnce,
  failureLines,
  FAST,
  local,
  names,
  NODE,
  openSource,
  runNode,
  assertCleanExit,
  sleep,
  tempDir,
  timed,
  toolNamed,
} from "./helpers.js"

/** A config entry that would create `marker` if it were ever spawned. */
const wouldMark = (marker: string, extra: object = {}) => ({ ...local(`--marker=${marker}`), ...extra })

describe("top level", () => {
  const a = { command: ["a"] }
  const b = { command: ["b"] }
  const c = { command: ["c"] }

  test("mcpServers wins over servers and mcp", () => {
    assert.deepEqual(Object.keys(parseMcpConfig({ mcp: { c }, servers: { b }, mcpServers: { a } })), ["a"])
  })

  test("servers wins over mcp", () => {
    assert.deepEqual(Object.keys(parseMcpConfig({ mcp: { c }, servers: { b } })), ["b"])
  })

  test("mcp is a wrapper too, and its siblings are not servers", () => {
    assert.deepEqual(Object.keys(parseMcpConfig({ mcp: { c }, other: { command: ["x"] } })), ["c"])
  })

  test("an unwrapped map drops builtins, agents, a2a and mcpServer", () => {
    const map = parseMcpConfig({ a, builtins: { ...b }, agents: { ...b }, a2a: { ...b }, mcpServer: { ...b }, c })
    assert.deepEqual(Object.keys(map), ["a", "c"])
  })

  test("parseMcpConfig returns the entries it was given", () => {
    const entry = { command: [NODE, "server.mjs", "--flag"], enabled: false, timeout: 1234 }
    const map = parseMcpConfig({ mcpServers: { x: entry } })
    assert.deepEqual(map.x.command, entry.command)
    assert.equal(map.x.enabled, false)
    assert.equal(map.x.timeout, 1234)
  })

  test("parseMcpConfig reads a path, absolute or relative to the working directory", (t) => {
    const file = path.join(tempDir(t), "mcp.json")
    fs.writeFileSync(file, JSON.stringify({ servers: { x: { url: "https://example.com/mcp", enabled: false } } }))
    for (const p of [file, path.relative(process.cwd(), file)]) {
      const map = parseMcpConfig(p)
      assert.deepEqual(Object.keys(map), ["x"], p)
      assert.equal(map.x.url, "https://example.com/mcp")
      assert.equal(map.x.enabled, false)
    }
  })

  test("loadMcp and listMcpTools unwrap the same way, from a path or an object", async (t) => {
    const dir = tempDir(t)
    const marker = path.join(dir, "spawned")
    const config = {
      servers: { kept: wouldMark(marker, { enabled: false }) },
      mcp: { ignored: wouldMark(marker) },
    }
    const file = path.join(dir, "mcp.json")
    fs.writeFileSync(file, JSON.stringify(config))
    for (const input of [config, file]) {
      const source = await loadMcp(input)
      assert.deepEqual(source.status, { kept: "disabled" })
      await source.close()
      assert.deepEqual(await listMcpTools(input), { tools: {}, status: { kept: "disabled" } })
    }
    await sleep(300) // an absence cannot be awaited: a server spawned by mistake has written its marker by now
    assert.equal(fs.existsSync(marker), false, "the entry under the losing wrapper was spawned")
  })

  test("reserved sibling sections are never spawned", async (t) => {
    const marker = path.join(tempDir(t), "spawned")
    const source = await openSource(t, {
      real: { ...local(), enabled: false },
      builtins: wouldMark(marker),
      agents: wouldMark(marker),
      a2a: wouldMark(marker),
      mcpServer: wouldMark(marker),
    })
    assert.deepEqual(source.status, { real: "disabled" })
    await sleep(300) // an absence cannot be awaited: a server spawned by mistake has written its marker by now
    assert.equal(fs.existsSync(marker), false)
  })
})

describe("whole-call errors", () => {
  const notObjects: Array<[string, unknown]> = [
    ["an array", [{ command: ["x"] }]],
    ["a number", 42],
    ["null", null],
  ]
  for (const [what, value] of notObjects) {
    test(`a config that is ${what} is rejected`, async () => {
      assert.throws(() => parseMcpConfig(value as never), /object|map/i)
      await assert.rejects(loadMcp(value as never), /object|map/i)
      await assert.rejects(listMcpTools(value as never), /object|map/i)
    })
  }

  /** Asserts all three entry points fail on `file` with a message naming it and matching `problem`. */
  async function assertFileRejected(file: string, problem: RegExp) {
    const check = (err: unknown) => {
      assert.ok(err instanceof Error, `not an Error: ${String(err)}`)
      assert.ok(err.message.includes(file), `message does not name ${file}: ${err.message}`)
      assert.match(err.message, problem)
      return true
    }
    assert.throws(() => parseMcpConfig(file), check)
    await assert.rejects(loadMcp(file), check)
    await assert.rejects(listMcpTools(file), check)
  }

  test("a missing file names the path and the problem", async (t) => {
    const file = path.join(tempDir(t), "no-such-mcp.json")
    await assertFileRejected(
      file,
      /no such file|not found|ENOENT|cannot read|could not read|does not exist|unreadable/i,
    )
  })

  test("a file that is not JSON names the path and the problem", async (t) => {
    const file = path.join(tempDir(t), "mcp.json")
    fs.writeFileSync(file, "{ mcpServers: nope")
    await assertFileRejected(file, /json|parse|syntax|expected|invalid/i)
  })

  test("a file whose JSON is not an object names the path and the problem", async (t) => {
    const file = path.join(tempDir(t), "mcp.json")
    fs.writeFileSync(file, "[1, 2, 3]")
    await assertFileRejected(file, /object|map/i)
  })
})

describe("entries", () => {
  test("enabled: false and disabled: true skip the server without spawning it", async (t) => {
    const dir = tempDir(t)
    const marks = { on: path.join(dir, "on"), off1: path.join(dir, "off1"), off2: path.join(dir, "off2") }
    const config = {
      on: wouldMark(marks.on, { enabled: true, disabled: false }),
      off1: wouldMark(marks.off1, { enabled: false }),
      off2: wouldMark(marks.off2, { disabled: true }),
    }
    const inv = await listMcpTools(config)
    assert.deepEqual(inv.status, { on: "connected", off1: "disabled", off2: "disabled" })
    assert.deepEqual(Object.keys(inv.tools), ["on"])
    const source = await openSource(t, config)
    assert.deepEqual(source.status, { on: "connected", off1: "disabled", off2: "disabled" })
    assert.ok(
      names(source).every((n) => n.startsWith("on_")),
      names(source).join(", "),
    )
    await sleep(300) // an absence cannot be awaited: a server spawned by mistake has written its marker by now
    assert.equal(fs.existsSync(marks.on), true, "the enabled control server should have left its marker")
    assert.equal(fs.existsSync(marks.off1), false, "enabled: false was spawned")
    assert.equal(fs.existsSync(marks.off2), false, "disabled: true was spawned")
  })

  describe("environment", () => {
    before(() => {
      process.env.TN_TEST_PARENT = "from-parent"
    })
    after(() => {
      delete process.env.TN_TEST_PARENT
    })

    test("env and environment are merged over the parent environment", async (t) => {
      const source = await openSource(t, {
        alias: { ...local(), env: { TN_TEST_OWN: "via-env" } },
        full: { ...local(), environment: { TN_TEST_OWN: "via-environment", TN_TEST_PARENT: "overridden" } },
        plain: local(),
      })
      const seen = async (server: string) => {
        const res = await toolNamed(source, `${server}_env`).execute({ names: ["TN_TEST_PARENT", "TN_TEST_OWN"] })
        assert.equal(res.isError, false, res.output)
        return JSON.parse(res.output)
      }
      assert.deepEqual(await seen("alias"), { TN_TEST_PARENT: "from-parent", TN_TEST_OWN: "via-env" })
      assert.deepEqual(await seen("full"), { TN_TEST_PARENT: "overridden", TN_TEST_OWN: "via-environment" })
      assert.deepEqual(await seen("plain"), { TN_TEST_PARENT: "from-parent", TN_TEST_OWN: null })
    })

    test("${VAR} expands in command, args and env; envFile is read beside the config file; inheritEnv: false keeps only the safe set", async (t) => {
      const dir = tempDir(t)
      fs.writeFileSync(
        path.join(dir, "server.env"),
        "# server secrets\nexport TN_FILE_ONLY='from file'\nTN_TEST_OWN=file\n",
      )
      const [node, script] = local().command
      const file = path.join(dir, "mcp.json")
      fs.writeFileSync(
        file,
        JSON.stringify({
          mcpServers: {
            expanded: {
              command: node,
              args: [script!, "--name=${TN_TEST_PARENT}"],
              env: { TN_TEST_OWN: "${TN_TEST_PARENT}-${TN_NOPE:-dflt}" },
            },
            filed: { command: [node, script], envFile: "server.env", env: { TN_TEST_OWN: "entry wins" } },
            sealed: { command: [node, script], inheritEnv: false, env: { TN_TEST_OWN: "own" } },
            unset: { command: [node, script, "${TN_NOPE}"] },
          },
        }),
      )
      const source = await openSource(t, file)
      assert.equal(source.status.unset, "failed")
      const seen = async (server: string, names: string[]) => {
        const res = await toolNamed(source, `${server}_env`).execute({ names })
        assert.equal(res.isError, false, res.output)
        return JSON.parse(res.output)
      }
      assert.deepEqual(await seen("expanded", ["TN_TEST_OWN"]), { TN_TEST_OWN: "from-parent-dflt" })
      assert.deepEqual(await seen("filed", ["TN_FILE_ONLY", "TN_TEST_OWN"]), {
        TN_FILE_ONLY: "from file",
        TN_TEST_OWN: "entry wins",
      })
      const sealed = await seen("sealed", ["TN_TEST_PARENT", "TN_TEST_OWN", "PATH", "HOME"])
      assert.deepEqual(sealed, {
        TN_TEST_PARENT: null,
        TN_TEST_OWN: "own",
        PATH: process.env.PATH ?? null,
        HOME: process.env.HOME ?? null,
      })
      const inv = await listMcpTools(file)
      assert.equal(inv.status.expanded, "connected")
    })
  })

  test("a relative command path resolves against the entry's cwd; a bare name only through PATH", async (t) => {
    const dir = tempDir(t)
    const script = path.join(dir, "srv.mjs")
    fs.writeFileSync(script, `#!${NODE}\nawait import(${JSON.stringify(local().command[1])})\n`, { mode: 0o755 })
    const inv = await listMcpTools({
      inCwd: { command: ["./srv.mjs"], cwd: dir },
      noCwd: { command: ["./srv.mjs"] },
      bare: { command: ["srv.mjs"], cwd: dir },
    })
    assert.deepEqual(inv.status, { inCwd: "connected", noCwd: "failed", bare: "failed" })
  })

  test("cwd sets the server's working directory", async (t) => {
    const dir = tempDir(t)
    const source = await openSource(t, { here: { ...local(), cwd: dir } })
    const res = await toolNamed(source, "here_cwd").execute({})
    assert.equal(res.isError, false, res.output)
    assert.equal(fs.realpathSync(res.output), dir)
  })

  describe("malformed entries", () => {
    const config = () => ({
      nocmd: { timeout: 1000 },
      strcmd: { command: `${NODE} server.mjs` },
      emptycmd: { command: [] },
      numcmd: { command: [NODE, 42] },
      badtimeout: { ...local(), timeout: "x" },
      good: local(),
    })
    const expected = {
      nocmd: "failed",
      strcmd: "failed",
      emptycmd: "failed",
      numcmd: "failed",
      badtimeout: "failed",
      good: "connected",
    }

    test("each fails its own server, quickly, while a good server connects", async (t) => {
      const { value: source, ms } = await timed(() => openSource(t, config()))
      assert.deepEqual(source.status, expected)
      assert.ok(names(source).length > 0 && names(source).every((n) => n.startsWith("good_")), names(source).join(", "))
      assert.ok(ms < FAST, `took ${ms} ms`)
      const inv = await listMcpTools(config())
      assert.deepEqual(inv.status, expected)
      assert.deepEqual(Object.keys(inv.tools), ["good"])
    })

    test("each gets one stderr line naming the server and the offending field", async () => {
      const run = await runNode(`
        import { loadMcp } from "toolnexus"
        const source = await loadMcp(${JSON.stringify(config())})
        await source.close()
      `)
      assertCleanExit(run)
      const field: Record<string, RegExp> = {
        nocmd: /command|url/,
        strcmd: /command/,
        emptycmd: /command/,
        numcmd: /command/,
        badtimeout: /timeout/,
      }
      for (const [server, re] of Object.entries(field)) {
        const lines = failureLines(run.stderr, server)
        assert.equal(lines.length, 1, `stderr lines for ${server}:\n${run.stderr}`)
        assert.match(lines[0], re)
      }
      assert.deepEqual(failureLines(run.stderr, "good"), [])
    })
  })
})

describe("type inference and remote entries", () => {
  let http: Awaited<ReturnType<typeof startHttpServer>>
  before(async () => {
    http = await startHttpServer()
  })
  after(() => http.close())

  test("url means remote, command means local; an explicit type agrees", async (t) => {
    const source = await openSource(t, {
      remote: { url: http.url },
      localish: local('--tools=["hello"]'),
      typedRemote: { type: "remote", url: http.url },
      typedLocal: { type: "local", ...local('--tools=["hello"]') },
    })
    assert.deepEqual(source.status, {
      remote: "connected",
      localish: "connected",
      typedRemote: "connected",
      typedLocal: "connected",
    })
    const res = await toolNamed(source, "remote_echo").execute({ via: "http" })
    assert.equal(res.isError, false, res.output)
    assert.deepEqual(JSON.parse(res.output), { via: "http" })
    assert.deepEqual(
      names(source).filter((n) => n.endsWith("_hello")),
      ["localish_hello", "typedLocal_hello"],
    )
  })

  describe("headers", () => {
    before(() => {
      process.env.TN_TEST_TOKEN = "s3cret-token"
    })
    after(() => {
      delete process.env.TN_TEST_TOKEN
    })

    test("header values expand ${NAME} from the environment", async (t) => {
      const source = await openSource(t, {
        remote: { url: http.url, headers: { "X-Token": "Bearer ${TN_TEST_TOKEN}", "X-Plain": "as-is" } },
      })
      const res = await toolNamed(source, "remote_headers").execute({})
      assert.equal(res.isError, false, res.output)
      const headers = JSON.parse(res.output)
      assert.equal(headers["x-token"], "Bearer s3cret-token")
      assert.equal(headers["x-plain"], "as-is")
    })
  })

  test("header and environment values never appear in diagnostics", async () => {
    const closed = await startHttpServer()
    const deadUrl = closed.url
    await closed.close()
    const run = await runNode(
      `
      import { loadMcp } from "toolnexus"
      const source = await loadMcp(${JSON.stringify({
        remote: {
          url: deadUrl,
          headers: { Authorization: "Bearer ${TN_LEAK_TOKEN}", "X-Literal": "literal-secret-789" },
        },
        bad: { ...exitAtOnce(), env: { TN_LEAK_ENV: "env-secret-456" } },
      })})
      console.log(JSON.stringify(source.status))
      await source.close()
    `,
      { env: { ...process.env, TN_LEAK_TOKEN: "header-secret-123" } },
    )
    assertCleanExit(run)
    assert.deepEqual(JSON.parse(run.stdout), { remote: "failed", bad: "failed" })
    assert.equal(failureLines(run.stderr, "remote").length, 1, run.stderr)
    assert.equal(failureLines(run.stderr, "bad").length, 1, run.stderr)
    for (const secret of ["header-secret-123", "literal-secret-789", "env-secret-456"]) {
      assert.ok(!run.stderr.includes(secret) && !run.stdout.includes(secret), `${secret} leaked:\n${run.stderr}`)
    }
  })
})
