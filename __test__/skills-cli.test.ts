// `toolnexus skills [mcp.json]`: every skill of every server of the config, against a server
// written with the official SDK v2 and a hand-written one; `--load <server>/<name>` prints a
// verified skill's body. Server text (descriptions, bodies) is printed with its control
// characters escaped; a rejected skill exits 1 naming the server.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test } from "node:test"
import { ESCAPE_BODY, FRONTMATTER } from "./fixtures/skills-hostile.mjs"
import { PDF_BODY, PDF_FRONTMATTER, REFUNDS_BODY, REFUNDS_URI } from "./fixtures/skills-server.mjs"
import { fixture, linesWith, NODE, ROOT, runProcess, tempDir, type NodeRun } from "./helpers.js"

const BIN = path.join(ROOT, "bin", "toolnexus.js")
const T = { timeout: 30_000 }
const show = (run: NodeRun) => `exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`
const runBin = (args: string[]) => runProcess([BIN, ...args], { timeout: 20_000 })

const sdk = { command: [NODE, fixture("skills-server.mjs")] }
const hostile = (mode: string) => ({ command: [NODE, fixture("skills-hostile.mjs"), mode] })
/** SDK v2, resources and prompts but no skills extension. */
const bare = { command: [NODE, fixture("offer-server.mjs")] }

function config(dir: string, servers: Record<string, object>): string {
  const file = path.join(dir, "mcp.json")
  fs.writeFileSync(file, JSON.stringify({ mcpServers: servers }))
  return file
}

describe("toolnexus skills", () => {
  test("lists every skill of every server: name, description, URI, file count", T, async (t) => {
    const file = config(tempDir(t), { skills: sdk, bare, hostile: hostile("clean") })
    const run = await runBin(["skills", file])
    assert.equal(run.code, 0, show(run))
    const lines = run.stdout.split("\n")
    const at = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix))
    const pdf = at("skills/pdf-processing: ")
    assert.equal(lines[pdf], `skills/pdf-processing: ${PDF_FRONTMATTER.description}`, show(run))
    assert.equal(lines[pdf + 1], "  skill://pdf-processing/SKILL.md (3 files)", show(run))
    const refunds = at("skills/refunds: ")
    assert.equal(lines[refunds + 1], `  ${REFUNDS_URI} (1 file)`, show(run))
    assert.equal(lines[at("hostile/pdf-processing: ")], `hostile/pdf-processing: ${FRONTMATTER.description}`)
    assert.deepEqual(linesWith(run.stdout, "bare/"), [], "a server without the extension lists none")

    const json = await runBin(["skills", file, "--json"])
    assert.equal(json.code, 0, show(json))
    const listed: Array<{ server: string; name: string; frontmatter: object }> = JSON.parse(json.stdout)
    assert.deepEqual(listed.map((s) => `${s.server}/${s.name}`).sort(), [
      "hostile/pdf-processing",
      "skills/pdf-processing",
      "skills/refunds",
    ])
    assert.deepEqual(
      listed.find((s) => s.server === "skills" && s.name === "pdf-processing")?.frontmatter,
      PDF_FRONTMATTER,
    )
  })

  test("--load prints the body of a skill, named or by its SKILL.md URI", T, async (t) => {
    const file = config(tempDir(t), { skills: sdk })
    const run = await runBin(["skills", file, "--load", "skills/pdf-processing"])
    assert.equal(run.code, 0, show(run))
    assert.equal(run.stdout.trim(), PDF_BODY.trim())
    const byUri = await runBin(["skills", file, "--load", `skills/${REFUNDS_URI}`])
    assert.equal(byUri.code, 0, show(byUri))
    assert.equal(byUri.stdout.trim(), REFUNDS_BODY.trim())
    const json = await runBin(["skills", file, "--load", "skills/pdf-processing", "--json"])
    const loaded = JSON.parse(json.stdout)
    assert.deepEqual(loaded.frontmatter, PDF_FRONTMATTER)
    assert.equal(loaded.verified, true)
    assert.deepEqual(loaded.files.map((f: { path: string }) => f.path).sort(), [
      "assets/blank.bin",
      "references/FORMS.md",
    ])
  })

  test("control characters in a description and a body are escaped", T, async (t) => {
    const file = config(tempDir(t), { hostile: hostile("escape") })
    const run = await runBin(["skills", file])
    assert.equal(run.code, 0, show(run))
    assert.ok(!run.stdout.includes("\u001b"), show(run))
    assert.match(run.stdout, /^hostile\/pdf-processing: Red \\u001b\[31m text$/m, show(run))
    const load = await runBin(["skills", file, "--load", "hostile/pdf-processing"])
    assert.equal(load.code, 0, show(load))
    assert.ok(!load.stdout.includes("\u001b"), show(load))
    assert.equal(load.stdout.trim(), ESCAPE_BODY.replace("\u001b", "\\u001b").trim())
  })

  test("a rejected skill or listing: exit 1, the reason names the server", T, async (t) => {
    const tampered = config(tempDir(t), { hostile: hostile("tamper-digest") })
    const load = await runBin(["skills", tampered, "--load", "hostile/pdf-processing"])
    assert.equal(load.code, 1, show(load))
    assert.match(load.stderr, /^toolnexus: MCP server "hostile" .*digest/m, show(load))
    assert.equal(load.stdout, "", "nothing of the rejected skill is printed")

    const invalid = config(tempDir(t), { hostile: hostile("invalid-entry"), skills: sdk })
    const run = await runBin(["skills", invalid])
    assert.equal(run.code, 1, show(run))
    assert.match(run.stderr, /^toolnexus: MCP server "hostile" /m, show(run))
    // The other server's skills are still listed.
    assert.match(run.stdout, /^skills\/refunds: /m, show(run))
  })

  test("usage errors exit 2", T, async (t) => {
    const file = config(tempDir(t), { skills: sdk })
    for (const args of [
      ["skills", file, "extra.json"],
      ["skills", file, "--load", "pdf-processing"],
      ["skills", file, "--load", "nope/pdf-processing"],
      ["skills", file, "--load", "skills/"],
      ["skills", file, "--frob"],
    ]) {
      const run = await runBin(args)
      assert.equal(run.code, 2, `${args.join(" ")}\n${show(run)}`)
    }
    const help = await runBin(["skills", "--help"])
    assert.equal(help.code, 0, show(help))
    assert.match(help.stdout, /^usage: toolnexus skills/)
  })
})
