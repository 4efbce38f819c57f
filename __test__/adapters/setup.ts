// What an adapter test starts: the official SDK's adapter-tools server through loadMcp,
// recording the calls it ran, and a stand-in for the model's API with its replies.
import fs from "node:fs"
import path from "node:path"
import type { TestContext } from "node:test"

import { loadMcp } from "../../index.js"
import { NODE, fixture, readRecord, tempDir } from "../helpers.js"
import { modelServer } from "./model-server.js"

export async function setup(t: TestContext, replies: Array<(body: any) => unknown>) {
  const record = path.join(tempDir(t), "calls.jsonl")
  const mcp = await loadMcp({ docs: { command: [NODE, fixture("adapter-tools.mjs"), `--record=${record}`] } })
  t.after(() => mcp.close())
  const model = await modelServer(replies)
  t.after(() => model.close())
  const calls = () => (fs.existsSync(record) ? readRecord<any>(record) : [])
  return { mcp, model, calls }
}
