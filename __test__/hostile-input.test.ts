// Issue 13: inputs that once crashed the host process or were mishandled by the call path.
// Each scenario that could abort Node runs in a child process, so a crash is reported as
// the exit it is rather than taking the test runner down.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { createMcpStore } from "toolnexus"
import { assertCleanExit, fixture, NODE, openSource, runNode, serverCmd, timed, toolNamed } from "./helpers.js"

const T = { timeout: 60_000 }

/** Runs `body` (an async ES module snippet with `loadMcp`, `createMcpStore` and `cmd`
 * in scope) in a child Node and returns what it printed as JSON. */
async function inChild(body: string): Promise<unknown> {
  const script = `
    import { loadMcp, createMcpStore } from "toolnexus"
    const cmd = ${JSON.stringify(serverCmd())}
    ${body}
  `
  const run = await runNode(script)
  assertCleanExit(run)
  return JSON.parse(run.stdout)
}

describe("huge durations are clamped, never fatal", T, () => {
  test("a config timeout of 1e30 or 1e22 ms connects and calls", async () => {
    const out = await inChild(`
      const source = await loadMcp({ a: { command: cmd, timeout: 1e30 }, b: { command: cmd, timeout: 1e22 } })
      const outputs = []
      for (const name of ["a_echo", "b_echo"]) {
        const res = await source.tools.find((t) => t.name === name).execute({ text: "hi" })
        outputs.push(res.output)
      }
      await source.close()
      console.log(JSON.stringify({ status: source.status, outputs }))
    `)
    assert.deepEqual(out, {
      status: { a: "connected", b: "connected" },
      outputs: ['{"text":"hi"}', '{"text":"hi"}'],
    })
  })

  test("execute with ctx.timeout 1e300 or Infinity runs the call", async () => {
    const out = await inChild(`
      const source = await loadMcp({ a: { command: cmd } })
      const echo = source.tools.find((t) => t.name === "a_echo")
      const outputs = []
      for (const timeout of [1e300, 1e22, Infinity]) outputs.push((await echo.execute({ text: "x" }, { timeout })).output)
      await source.close()
      console.log(JSON.stringify(outputs))
    `)
    assert.deepEqual(out, ['{"text":"x"}', '{"text":"x"}', '{"text":"x"}'])
  })

  test("createMcpStore with every duration option at 1e300 works", async () => {
    const out = await inChild(`
      const huge = { waitLocalMs: 1e300, waitRemoteMs: 1e300, backoffMs: 1e300, backoffMaxMs: 1e300 }
      const store = createMcpStore({ a: { command: cmd } }, huge)
      const names = (await store.listToolsAsync()).map((t) => t.name)
      const res = await store.callTool("a_echo", { text: "s" }, { timeout: 1e300 })
      await store.close()
      console.log(JSON.stringify({ echo: names.includes("a_echo"), output: res.output }))
    `)
    assert.deepEqual(out, { echo: true, output: '{"text":"s"}' })
  })
})

const hostile = (...flags: string[]) => ({ command: [NODE, fixture("hostile-server.mjs"), ...flags], timeout: 5_000 })

describe("a server that abuses the protocol", T, () => {
  test("responses to ids never sent are ignored, before the initialize answer and after", async (t) => {
    const source = await openSource(t, { h: hostile("--stray") })
    assert.equal(source.status.h, "connected")
    assert.equal(source.tools.length, 5)
    const res = await toolNamed(source, "h_structured").execute({})
    assert.equal(res.isError, false, res.output)
  })

  test("a request with malformed params is refused under its own id", async (t) => {
    const source = await openSource(t, { h: hostile() })
    const res = await toolNamed(source, "h_ask").execute({})
    assert.equal(res.isError, false, res.output)
    const reply = JSON.parse(res.output)
    assert.equal(reply.id, "ask-1")
    assert.equal(typeof reply.error?.code, "number")
  })

  test("an answer that is not valid UTF-8 is read lossily, at once", async (t) => {
    const source = await openSource(t, { h: hostile() })
    const { value: res, ms } = await timed(() => toolNamed(source, "h_latin1").execute({}))
    assert.deepEqual([res.isError, res.output], [false, "caf\uFFFD"])
    assert.ok(ms < 4_000, `took ${ms} ms: the answer waited out the timeout`)
  })

  test("an answer that is not JSON fails its call at once", async (t) => {
    const source = await openSource(t, { h: hostile() })
    const { value: res, ms } = await timed(() => toolNamed(source, "h_garbled").execute({}))
    assert.deepEqual(
      [res.isError, res.output],
      [true, 'MCP server "h" sent a response to tools/call "garbled" that is not valid JSON'],
    )
    assert.ok(ms < 4_000, `took ${ms} ms: the answer waited out the timeout`)
  })

  test("structured output is exactly JSON.stringify(structuredContent)", async (t) => {
    const source = await openSource(t, { h: hostile() })
    const res = await toolNamed(source, "h_structured").execute({})
    const wire = '{"total":6.0,"big":1e21,"small":1.5e-7,"b":1,"1":2.50}'
    assert.equal(res.output, JSON.stringify(JSON.parse(wire)))
    assert.equal(res.output, '{"1":2.5,"total":6,"big":1e+21,"small":1.5e-7,"b":1}')
  })

  test("a call's result holding `tools` is not taken for a pending listing", async (t) => {
    const store = createMcpStore({ h: hostile() })
    t.after(() => store.close())
    await store.listToolsAsync()
    const { value: res, ms } = await timed(() => store.callTool("h_listing", {}))
    assert.deepEqual([res.isError, res.output], [false, "the call's own answer"])
    assert.ok(ms < 4_000, `took ${ms} ms: the answer was swallowed`)
  })
})
