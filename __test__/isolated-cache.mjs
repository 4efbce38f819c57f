// Points the catalog of every store a test makes (and of the child processes it starts)
// at a temp folder of its own, never the user's cache. Loaded with `--import` by
// `npm run test:js` and by helpers.ts.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"

if (!process.env.TOOLNEXUS_TEST_CACHE) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-cache-"))
  process.env.TOOLNEXUS_TEST_CACHE = dir
  process.env.XDG_CACHE_HOME = dir
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }))
}
