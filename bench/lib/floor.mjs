// The floor: newline-delimited JSON-RPC over the child's stdin/stdout in plain Node, with no
// MCP client, no schema validation and no timers. Whatever a JavaScript MCP client does on
// top of this is extra work, so these figures are what any such client could at best reach.
// In the 2026-07-28 era there is no handshake: every request carries `_meta` instead.

import { spawn } from "node:child_process"
import { requestMeta } from "./meta.mjs"

const NEWLINE = 0x0a

/** What both floors do on top of `request(method, params)` and `notify(method)`. */
export class FloorProtocol {
  /** The 2025 handshake; nothing in the 2026 era, where no request needs one first. */
  async open() {
    if (this.meta) return
    await this.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "floor", version: "0" },
    })
    await this.notify("notifications/initialized")
  }

  async listTools() {
    const tools = []
    let cursor
    do {
      const page = await this.request("tools/list", cursor === undefined ? {} : { cursor })
      tools.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return tools
  }

  /** The text of a tools/call result, parts joined by "\n". */
  async callTool(name, args) {
    const result = await this.request("tools/call", { name, arguments: args })
    const { content } = result
    return content.length === 1 ? content[0].text : content.map((c) => c.text).join("\n")
  }
}

/** The floor over a child's stdin and stdout. */
export class FloorConnection extends FloorProtocol {
  /**
   * @param {string[]} command program, then arguments
   * @param {string} version the protocol version: "2025-11-25" or "2026-07-28"
   */
  constructor(command, version) {
    super()
    this.meta = requestMeta(version)
    this.child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] })
    this.nextId = 1
    this.pending = new Map()
    this.chunks = []
    this.exited = new Promise((resolve) => this.child.once("exit", resolve))
    this.child.stdout.on("data", (chunk) => this.onData(chunk))
    this.child.once("exit", () => {
      for (const { reject } of this.pending.values()) reject(new Error("server exited"))
      this.pending.clear()
    })
    this.child.stdin.on("error", () => {})
  }

  onData(chunk) {
    let start = 0
    let end = chunk.indexOf(NEWLINE)
    while (end !== -1) {
      let line
      if (this.chunks.length === 0) {
        line = chunk.toString("utf8", start, end)
      } else {
        this.chunks.push(chunk.subarray(start, end))
        line = Buffer.concat(this.chunks).toString("utf8")
        this.chunks = []
      }
      if (line.length > 0) this.onMessage(JSON.parse(line))
      start = end + 1
      end = chunk.indexOf(NEWLINE, start)
    }
    if (start < chunk.length) this.chunks.push(start === 0 ? chunk : chunk.subarray(start))
  }

  onMessage(message) {
    const waiter = message.id !== undefined && this.pending.get(message.id)
    if (!waiter) return // a notification or a request from the server: not used here
    this.pending.delete(message.id)
    if (message.error) waiter.reject(new Error(message.error.message))
    else waiter.resolve(message.result)
  }

  request(method, params) {
    const id = this.nextId++
    if (this.meta) params = { ...params, _meta: this.meta }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.child.stdin.write(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${JSON.stringify(params)}}\n`)
    })
  }

  notify(method) {
    this.child.stdin.write(`{"jsonrpc":"2.0","method":"${method}"}\n`)
  }

  async close() {
    this.child.stdin.end()
    await this.exited
  }
}
