// What toolnexus prints to stderr carries no control characters from a server: its
// escapes (clear the screen, retitle the window, \r, backspace, C1 codes) are shown as
// escapes in the failure lines, the warnings and the default log printer.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { safeLine } from "../js/terminal.js"
import { assertCleanExit, failureLines, fixture, linesWith, local, NODE, runNode, toolsFlag } from "./helpers.js"

const T = { timeout: 60_000 }

const HOSTILE = "\u001b[2J\u001b]0;pwned\u0007 a\rb\bc\u009bd\u007f\nfake line"
/** Every control character but the newline that ends each of our lines. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/

const leaky = (...flags: string[]) => ({ command: [NODE, fixture("leaky-server.mjs"), ...flags] })

/** Asserts stderr holds no raw control character and no line a server made on its own. */
function assertInert(stderr: string) {
  assert.ok(!RAW_CONTROL.test(stderr), `a raw control character reached stderr: ${JSON.stringify(stderr)}`)
  for (const line of stderr.split("\n").filter(Boolean)) {
    assert.ok(line.startsWith("[toolnexus] "), `a line toolnexus did not write: ${JSON.stringify(line)}`)
  }
}

describe("control characters from servers are neutralised on stderr", () => {
  test("safeLine writes each control character as an escape and leaves other text alone", () => {
    assert.equal(
      safeLine("a\u001b[2Jb\r\n\t\b\u0000\u007f\u009bc"),
      "a\\u001b[2Jb\\r\\n\\t\\u0008\\u0000\\u007f\\u009bc",
    )
    assert.equal(safeLine('plain "text" é ✓ \u00a0'), 'plain "text" é ✓ \u00a0')
  })

  test("failure lines: an initialize error and stderr before exit", T, async () => {
    const config = {
      init: leaky("--fail-init", `--say=${HOSTILE}`),
      gone: leaky("--exit-at-start", `--say=${HOSTILE}`),
    }
    const run = await runNode(`
      import { loadMcp } from "toolnexus"
      const source = await loadMcp(${JSON.stringify(config)})
      await source.close()
    `)
    assertCleanExit(run)
    assertInert(run.stderr)
    for (const server of ["init", "gone"]) {
      const [line] = failureLines(run.stderr, server)
      assert.ok(line?.includes("\\u001b[2J\\u001b]0;pwned\\u0007 a\\rb\\u0008c\\u009bd\\u007f"), `${server}: ${line}`)
      assert.ok(line.includes("fake line"), line)
    }
  })

  test("warnings print the names they quote escaped", T, async () => {
    // The one warning left quotes a name from the config's `tools` map.
    const entry = { ...local(toolsFlag(["x"])), tools: { "x\u001b[2J\u009b": true } }
    const run = await runNode(`
      import { loadMcp } from "toolnexus"
      const source = await loadMcp(${JSON.stringify({ s: entry })})
      await source.close()
    `)
    assertCleanExit(run)
    assertInert(run.stderr)
    const lines = linesWith(run.stderr, "which the server does not have")
    assert.equal(lines.length, 1, run.stderr)
    assert.ok(lines[0]!.includes('"x\\u001b[2J\\u009b"'), lines[0])
  })

  test("the default log printer", T, async () => {
    const run = await runNode(`
      import { loadMcp } from "toolnexus"
      // Both messages printed on stderr.
      let heard
      const both = new Promise((resolve) => (heard = resolve))
      let printed = 0
      const write = process.stderr.write.bind(process.stderr)
      process.stderr.write = (chunk, ...rest) => (
        String(chunk).includes('MCP server "s" error: ') && ++printed === 2 && heard(), write(chunk, ...rest)
      )
      const source = await loadMcp(${JSON.stringify({ s: leaky(`--say=${HOSTILE}`) })})
      await source.tools.find((t) => t.name === "s_log").execute({})
      // Bounded, and keeping the process up meanwhile: a source alone does not.
      const timer = setTimeout(() => heard(Promise.reject(new Error("the log messages were not printed in 15 s"))), 15_000)
      await both
      clearTimeout(timer)
      await source.close()
    `)
    assertCleanExit(run)
    assertInert(run.stderr)
    const lines = linesWith(run.stderr, '[toolnexus] MCP server "s" error: ')
    assert.equal(lines.length, 2, run.stderr)
    assert.ok(lines[0]!.includes("\\u009bd\\u007f\\nfake line"), lines[0])
  })
})
