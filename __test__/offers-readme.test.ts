// The README's "What servers offer besides tools" examples, run verbatim as a user would
// (importing "toolnexus" through the package's self-reference), from the folder of the
// fixture config they load (fixtures/readme-offers/mcp.json: servers written with the
// official SDK v2, served over stdio in the 2026-07-28 era).
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { test } from "node:test"

import { fixture, ROOT, runProcess } from "./helpers.js"

function example(name: string): string {
  const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8")
  const match = new RegExp(`<!-- runs as a test: ${name} -->\\n\`\`\`js\\n([\\s\\S]*?)\`\`\``).exec(readme)
  assert.ok(match, `README has the ${name} example`)
  return match[1]
}

const expected = {
  offers: ["true", "<p>sunny</p>", "[ 'intro', 'install' ]"],
  subscribe: ["Welcome!"],
}

for (const [name, lines] of Object.entries(expected)) {
  test(`README example: ${name}`, async () => {
    const run = await runProcess(["--input-type=module", "-e", example(name)], { cwd: fixture("readme-offers") })
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(run.stdout.trim().split("\n"), lines)
  })
}
