// Runs each example of docs/loadMcp.md and docs/listMcpTools.md (copied verbatim into
// __test__/docs/) as its own process, the way a user would run it: from the repository
// root, importing "toolnexus" through the package's self-reference.
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import { describe, it } from "node:test"

const root = new URL("..", import.meta.url)
const examples = ["loadMcp-1", "loadMcp-2", "loadMcp-3", "listMcpTools-1", "listMcpTools-2", "listMcpTools-3"]

function run(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const args = ["--import", "tsx", `__test__/docs/${file}`]
    // The timeout only guards against a hang; the examples bound themselves well below it.
    execFile(process.execPath, args, { cwd: root, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : null) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

describe("docs examples", () => {
  for (const name of examples) {
    it(name, async () => {
      const { code, stdout, stderr } = await run(`${name}.ts`)
      const detail = `exit code ${code}\n--- stdout\n${stdout}--- stderr\n${stderr}`
      assert.equal(code, 0, detail)
      assert.ok(
        stdout.split("\n").some((line) => line.startsWith("ok:")),
        detail,
      )
    })
  }
})
