// The call path's wake-ups: a local server's answer wakes the Node thread alone, which reads
// it itself; the reading goes back to a Rust thread when Node is busy, and the Node side of
// it never outlives its thread.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { assertCleanExit, local, openSource, runNode, serverCmd, toolNamed } from "./helpers.js"

const T = { timeout: 60_000 }

describe("wake-ups", () => {
  test("a sequential call to a local server sleeps and wakes the host about once", T, async (t) => {
    const source = await openSource(t, { srv: local() })
    const echo = toolNamed(source, "srv_echo")
    for (let i = 0; i < 50; i++) await echo.execute({ text: "warm" })
    const calls = 400
    const before = process.resourceUsage().voluntaryContextSwitches
    for (let i = 0; i < calls; i++) {
      const result = await echo.execute({ text: `n${i}` })
      assert.equal(JSON.parse(result.output).text, `n${i}`)
    }
    const perCall = (process.resourceUsage().voluntaryContextSwitches - before) / calls
    // Reading on a Rust thread that then wakes Node costs two or more (2.0 measured).
    assert.ok(perCall < 1.5, `${perCall.toFixed(2)} voluntary context switches per call`)
  })

  test("a worker thread that calls and ends without closing leaves the host process working", T, async () => {
    const script = `
      import { Worker } from "node:worker_threads"
      import { loadMcp } from "toolnexus"
      const command = ${JSON.stringify(serverCmd())}
      const worker = new Worker(\`
        import { loadMcp } from "toolnexus"
        const source = await loadMcp({ srv: { command: \${JSON.stringify(command)} } })
        const echo = source.tools.find((tool) => tool.name === "srv_echo")
        for (let i = 0; i < 20; i++) await echo.execute({ text: "w" })
        process.exit(0)
      \`, { eval: true, type: "module" })
      await new Promise((resolve, reject) => { worker.once("exit", resolve); worker.once("error", reject) })
      const source = await loadMcp({ srv: { command } })
      const echo = source.tools.find((tool) => tool.name === "srv_echo")
      const result = await echo.execute({ text: "main" })
      await source.close()
      console.log(result.output)
    `
    const run = await runNode(script)
    assertCleanExit(run)
    assert.equal(JSON.parse(run.stdout).text, "main")
  })
})
