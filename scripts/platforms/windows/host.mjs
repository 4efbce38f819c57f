// A host that starts the server and its grandchild, writes their pids to the file named by
// its argument, then kills itself without closing anything.
import fs from "node:fs"
import { loadMcp } from "../../../index.js"
import { config, call } from "./common.mjs"

const mcp = await loadMcp(config())
const pids = { server: await call(mcp, "pid"), grandchild: await call(mcp, "grandchild") }
fs.writeFileSync(process.argv[2], JSON.stringify(pids))
process.kill(process.pid, "SIGKILL")
