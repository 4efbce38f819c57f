// The `toolnexus list [config]` bin: which servers come up and what tools they offer.
// Exit codes: 0 all good, 1 a server failed, 2 a usage or config error.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test } from "node:test"
import { failureLines, linesWith, NODE, ROOT, runProcess, tempDir, type NodeRun } from "./helpers.js"

const BIN = path.join(ROOT, "bin", "toolnexus.js")
const DEMO_SERVER = path.join(ROOT, "examples", "demo-server.mjs")
const TEST_TIMEOUT = { timeout: 30_000 }

/** Runs `node bin/toolnexus.js ...args` (from the repo root unless `cwd`); never rejects. */
const runBin = (args: string[], opts: { cwd?: string; timeout?: number } = {}) =>
  runProcess([BIN, ...args], { cwd: opts.cwd, timeout: opts.timeout ?? 20_000 })

const show = (run: NodeRun) => `exit ${run.code} (signal ${run.signal})\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`

function assertExit(run: NodeRun, code: number): void {
  assert.equal(run.timedOut, false, `the bin did not exit on its own\n${show(run)}`)
  assert.equal(run.code, code, show(run))
}

const USAGE = /^usage: toolnexus list/m

function writeConfig(dir: string, config: unknown, name = "mcp.json"): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, typeof config === "string" ? config : JSON.stringify(config))
  return file
}

describe("toolnexus list", () => {
  test(
    "examples/mcp.json: exit 0, the demo server's tools with required params, the remote disabled",
    TEST_TIMEOUT,
    async () => {
      const run = await runBin(["list", "examples/mcp.json"])
      assertExit(run, 0)
      const lines = run.stdout.split("\n")
      const demo = lines.findIndex((l) => l.startsWith("demo: connected"))
      assert.ok(demo >= 0, `no "demo: connected" line\n${show(run)}`)
      // The demo server's tools follow its line, indented, in listed order.
      const tools = lines.slice(demo + 1, demo + 4)
      assert.match(tools[0], /^\s+echo \(requires: text\): /, show(run))
      assert.match(tools[1], /^\s+add \(requires: a, b\): /, show(run))
      assert.match(tools[2], /^\s+word_count \(requires: text\): /, show(run))
      assert.deepEqual(linesWith(run.stdout, "example-remote:"), ["example-remote: disabled"])
      assert.equal(failureLines(run.stderr, "demo").length, 0, show(run))
    },
  )

  test("a failing server: exit 1, printed as failed; the other servers still listed", TEST_TIMEOUT, async (t) => {
    const dir = tempDir(t)
    const file = writeConfig(dir, {
      mcpServers: {
        bad: { command: ["node", "/no/such/script.mjs"], timeout: 10_000 },
        good: { command: [NODE, DEMO_SERVER], timeout: 10_000 },
      },
    })
    const run = await runBin(["list", file])
    assertExit(run, 1)
    assert.deepEqual(linesWith(run.stdout, "bad:"), ["bad: failed"], show(run))
    assert.ok(linesWith(run.stdout, "good: connected").length === 1, show(run))
    // Its reason is said once: in the listing, not again on stderr (issue 24).
    assert.equal(failureLines(run.stderr, "bad").length, 0, show(run))
    const reason = run.stdout.split("\n")[run.stdout.split("\n").indexOf("bad: failed") + 1] ?? ""
    assert.match(reason, /^ {2}after \d+ ms: /, show(run))
    assert.equal(run.stderr.split(reason.replace(/^ {2}after \d+ ms: /, "")).length, 1, show(run))
  })

  test("the config defaults to ./mcp.json in the working directory", TEST_TIMEOUT, async (t) => {
    const dir = tempDir(t)
    writeConfig(dir, { off: { url: "https://example.com/mcp", enabled: false } })
    const run = await runBin(["list"], { cwd: dir })
    assertExit(run, 0)
    assert.deepEqual(run.stdout.trim().split("\n"), ["off: disabled"])
  })

  for (const args of [[], ["frob"], ["list", "a.json", "b.json"], ["--help"]]) {
    test(`arguments ${JSON.stringify(args)}: exit 2 with a usage line`, TEST_TIMEOUT, async () => {
      const run = await runBin(args)
      assertExit(run, 2)
      assert.match(run.stderr, USAGE, show(run))
      assert.equal(run.stdout, "", show(run))
    })
  }

  test("a missing config file: exit 2 naming the file", TEST_TIMEOUT, async (t) => {
    const missing = path.join(tempDir(t), "nope", "mcp.json")
    const run = await runBin(["list", missing])
    assertExit(run, 2)
    assert.ok(run.stderr.includes(missing), `stderr does not name ${missing}\n${show(run)}`)
    assert.equal(run.stdout, "", show(run))
  })

  test("a config that is not JSON: exit 2 naming the file", TEST_TIMEOUT, async (t) => {
    const file = writeConfig(tempDir(t), "{ not json")
    const run = await runBin(["list", file])
    assertExit(run, 2)
    assert.ok(run.stderr.includes(file), `stderr does not name ${file}\n${show(run)}`)
  })
})

/** Characters a server could use to take over a terminal: ESC sequences, CSI, \r, backspace. */
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/

describe("toolnexus list: the doctor", () => {
  test(
    "each server's protocol version, time to come up, tool count, and a failure's reason in full",
    TEST_TIMEOUT,
    async (t) => {
      const dir = tempDir(t)
      const file = writeConfig(dir, {
        good: { command: [NODE, DEMO_SERVER] },
        broken: {
          command: [NODE, "-e", "console.error('first line'); console.error('the real cause'); process.exit(3)"],
        },
        unset: { command: ["x", "${TN_SURELY_UNSET_VAR}"] },
      })
      const run = await runBin(["list", file])
      assertExit(run, 1)
      const lines = run.stdout.split("\n")
      assert.match(lines[0]!, /^good: connected \(3 tools, protocol 2025-\d\d-\d\d, up in \d+ ms\)$/, show(run))
      const broken = lines.indexOf("broken: failed")
      assert.ok(broken > 0, show(run))
      assert.match(
        lines[broken + 1]!,
        /^ {2}after \d+ ms: exited \(code 3\) during initialize; stderr: first line \| the real cause$/,
        show(run),
      )
      const unset = lines.indexOf("unset: failed")
      assert.match(lines[unset + 1]!, /^ {2}"command\[1\]" uses \$\{TN_SURELY_UNSET_VAR\}, which is not set/, show(run))
    },
  )

  test("--json: the same facts and the tools, as JSON", TEST_TIMEOUT, async (t) => {
    const file = writeConfig(tempDir(t), {
      good: { command: [NODE, DEMO_SERVER] },
      off: { command: ["x"], enabled: false },
    })
    const run = await runBin(["list", file, "--json"])
    assertExit(run, 0)
    const { servers } = JSON.parse(run.stdout)
    assert.deepEqual(Object.keys(servers), ["good", "off"])
    assert.equal(servers.good.status, "connected")
    assert.match(servers.good.protocolVersion, /^2025-/)
    assert.equal(typeof servers.good.connectMs, "number")
    assert.equal(servers.good.toolCount, 3)
    assert.deepEqual(
      servers.good.tools.map((x: { name: string }) => x.name),
      ["echo", "add", "word_count"],
    )
    assert.deepEqual(servers.good.tools[1].inputSchema.required, ["a", "b"])
    assert.deepEqual(servers.off, { status: "disabled", tools: [] })
  })

  test("what servers send never reaches the terminal raw: names, descriptions, reasons", TEST_TIMEOUT, async (t) => {
    const evil = "\u001b[31mred\u001b]0;title\u0007\r\bover\u009b2J"
    const file = writeConfig(tempDir(t), {
      srv: {
        command: [
          NODE,
          path.join(ROOT, "__test__", "fixtures", "server.mjs"),
          `--tools=${JSON.stringify([{ name: `t${evil}`, description: `d${evil}`, inputSchema: { type: "object", required: [`p${evil}`] } }])}`,
        ],
      },
      dying: { command: [NODE, "-e", `process.stderr.write(${JSON.stringify(`boom${evil}\n`)}); process.exit(1)`] },
    })
    for (const [args, shown] of [
      [["list", file], "\\u001b[31mred"],
      [["list", file, "--json"], "\\u001b[31mred"],
    ] as const) {
      const run = await runBin([...args])
      assertExit(run, 1)
      assert.doesNotMatch(run.stdout, UNSAFE, show(run))
      assert.ok(run.stdout.includes(shown), `escapes are shown, not dropped\n${show(run)}`)
    }
    const json = JSON.parse((await runBin(["list", file, "--json"])).stdout)
    assert.equal(json.servers.srv.tools[0].description, `d${evil}`, "--json still parses to the text as sent")
  })

  test("list --help: what it does, on stdout, exit 0", TEST_TIMEOUT, async () => {
    const run = await runBin(["list", "--help"])
    assertExit(run, 0)
    assert.match(run.stdout, /^usage: toolnexus list/)
    assert.match(run.stdout, /--json/)
  })
})

describe("toolnexus call", () => {
  const config = (t: import("node:test").TestContext) =>
    writeConfig(tempDir(t), {
      demo: { command: [NODE, DEMO_SERVER], tools: { echo: true } },
      fixture: { command: [NODE, path.join(ROOT, "__test__", "fixtures", "server.mjs")] },
      other: { command: [NODE, "/no/such/server.mjs"] },
    })

  test(
    "calls one tool of one server and prints its output; the tools filter does not hide it",
    TEST_TIMEOUT,
    async (t) => {
      const run = await runBin(["call", "demo", "add", '{"a": 2, "b": 3}', "--config", config(t)])
      assertExit(run, 0)
      assert.equal(run.stdout.trim(), "5")
      assert.equal(failureLines(run.stderr, "other").length, 0, `only the named server is started\n${show(run)}`)
    },
  )

  test("--json prints the whole result; an error result exits 1", TEST_TIMEOUT, async (t) => {
    const file = config(t)
    const ok = await runBin(["call", "fixture", "echo", '{"x": 1}', "--config", file, "--json"])
    assertExit(ok, 0)
    assert.deepEqual(JSON.parse(ok.stdout), { output: '{"x":1}', isError: false, metadata: { server: "fixture" } })
    const failed = await runBin(["call", "fixture", "fail", "--config", file])
    assertExit(failed, 1)
    assert.equal(failed.stdout.trim(), "first problem\n\nsecond problem")
  })

  test("--timeout bounds the call", TEST_TIMEOUT, async (t) => {
    const run = await runBin(["call", "fixture", "hang", "--config", config(t), "--timeout", "300"])
    assertExit(run, 1)
    assert.match(run.stdout, /did not answer tools\/call "hang" within 300 ms/, show(run))
  })

  test("a server that fails to start exits 1 with its reason on stderr", TEST_TIMEOUT, async (t) => {
    const run = await runBin(["call", "other", "x", "--config", config(t)])
    assertExit(run, 1)
    assert.equal(failureLines(run.stderr, "other").length, 1, show(run))
  })

  for (const [what, args, pattern] of [
    ["an unknown server", ["call", "nope", "x"], /no MCP server "nope" in .*; it has: "demo", "fixture", "other"/],
    [
      "an unknown tool",
      ["call", "demo", "nope"],
      /MCP server "demo" has no tool "nope"; it has: echo, add, word_count/,
    ],
    ["arguments that are not an object", ["call", "demo", "add", "[1]"], /must be a JSON object/],
    ["arguments that are not JSON", ["call", "demo", "add", "{a"], /not JSON/],
    ["a bad --timeout", ["call", "demo", "add", "--timeout", "soon"], /--timeout must be a positive number/],
    ["a missing tool name", ["call", "demo"], /^usage: toolnexus call/m],
    ["an unknown option", ["call", "demo", "add", "--frob"], /^usage: toolnexus call/m],
  ] as const) {
    test(`${what}: exit 2 saying so`, TEST_TIMEOUT, async (t) => {
      const run = await runBin([...args, "--config", config(t)])
      assertExit(run, 2)
      assert.match(run.stderr, pattern, show(run))
    })
  }

  test("call --help: what it does, on stdout, exit 0", TEST_TIMEOUT, async () => {
    const run = await runBin(["call", "--help"])
    assertExit(run, 0)
    assert.match(run.stdout, /^usage: toolnexus call <server> <tool>/)
    assert.match(run.stdout, /--timeout ms/)
  })

  test("a tool's output from the server is terminal-safe but keeps its lines", TEST_TIMEOUT, async (t) => {
    const run = await runBin([
      "call",
      "fixture",
      "echo",
      JSON.stringify({ s: "a\u001b[2Jb\u009b" }),
      "--config",
      config(t),
    ])
    assertExit(run, 0)
    assert.doesNotMatch(run.stdout, UNSAFE, show(run))
    const text = await runBin(["call", "fixture", "text", "--config", config(t)])
    assert.equal(text.stdout, "alpha\nbeta\ngamma\n")
  })
})

describe("toolnexus schema", () => {
  test("prints the shipped mcp.schema.json, which the package publishes", TEST_TIMEOUT, async () => {
    const run = await runBin(["schema"])
    assertExit(run, 0)
    const shipped = fs.readFileSync(path.join(ROOT, "mcp.schema.json"), "utf8")
    assert.equal(run.stdout, shipped)
    assert.equal(JSON.parse(run.stdout).title, "mcp.json")
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"))
    assert.ok(pkg.files.includes("mcp.schema.json"), "mcp.schema.json is not in package.json files")
  })

  test("schema --help says how to use it, on stdout, exit 0", TEST_TIMEOUT, async () => {
    const run = await runBin(["schema", "--help"])
    assertExit(run, 0)
    assert.match(run.stdout, /"\$schema": "\.\/node_modules\/toolnexus\/mcp\.schema\.json"/)
  })
})
