// serveStoreApi's listening address: loopback unless the host asks for another.
import assert from "node:assert/strict"
import { test } from "node:test"
import { createMcpStore, serveStoreApi } from "toolnexus"

test("an empty host means the default, loopback", async (t) => {
  const store = createMcpStore({})
  t.after(() => store.close())
  const api = await serveStoreApi(store, { host: "" })
  t.after(() => api.close())
  const address = (api.server as import("node:http").Server).address()
  assert.equal(typeof address === "object" && address?.address, "127.0.0.1")
  assert.equal(api.host, "127.0.0.1")
  assert.equal(api.url, `http://127.0.0.1:${api.port}`)
  const res = await fetch(`${api.url}/for_store/list_tools`)
  assert.equal(res.status, 200)
})
