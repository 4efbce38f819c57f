// The floor over streamable HTTP: one JSON-RPC POST per request through a keep-alive
// `http.Agent`, the answer read as JSON, in plain Node. No MCP client, no fetch, no
// validation; what it reaches is the server's own ceiling as a Node client can see it.

import http from "node:http"
import { FloorProtocol } from "./floor.mjs"
import { requestMeta } from "./meta.mjs"

export class HttpFloorConnection extends FloorProtocol {
  /**
   * @param {string} url the endpoint
   * @param {string} version the protocol version: "2025-11-25" or "2026-07-28"
   */
  constructor(url, version) {
    super()
    this.url = new URL(url)
    this.version = version
    this.meta = requestMeta(version)
    this.agent = new http.Agent({ keepAlive: true })
    this.nextId = 1
    this.sessionId = undefined
  }

  post(body, headers) {
    return new Promise((resolve, reject) => {
      const request = http.request(this.url, {
        method: "POST",
        agent: this.agent,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": this.version,
          ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}),
          ...headers,
        },
      })
      request.once("error", reject)
      request.once("response", (response) => {
        const chunks = []
        response.on("data", (chunk) => chunks.push(chunk))
        response.once("error", reject)
        response.once("end", () => {
          if (response.statusCode >= 300) {
            reject(new Error(`HTTP ${response.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 200)}`))
          } else {
            this.sessionId ??= response.headers["mcp-session-id"]
            resolve(chunks.length === 0 ? undefined : Buffer.concat(chunks).toString("utf8"))
          }
        })
      })
      request.end(body)
    })
  }

  async request(method, params) {
    if (this.meta) params = { ...params, _meta: this.meta }
    // SEP-2243: a 2026 request names its method and, for a call, its tool in headers.
    const headers = this.meta ? { "mcp-method": method, ...(params.name ? { "mcp-name": params.name } : {}) } : {}
    const text = await this.post(JSON.stringify({ jsonrpc: "2.0", id: this.nextId++, method, params }), headers)
    const message = JSON.parse(text)
    if (message.error) throw new Error(message.error.message)
    return message.result
  }

  notify(method) {
    return this.post(JSON.stringify({ jsonrpc: "2.0", method }), {})
  }

  async close() {
    this.agent.destroy()
  }
}
