import { CLIENTS, makeClient } from "./lib/clients.mjs"
import { refserverPath, serverCommand, startHttpServer } from "./lib/refserver.mjs"
const bin = refserverPath()
const http = await startHttpServer(bin)
for (const { kind, era } of CLIENTS) {
  const c = await makeClient(kind, era)
  for (const endpoint of [{ command: serverCommand(bin) }, { url: http.url }]) {
    try {
      const t0 = performance.now()
      const s = await c.open([endpoint])
      const echo = s.caller(0, "echo")
      const out = await echo({ text: "hi" })
      let t1 = performance.now()
      for (let i = 0; i < 200; i++) await echo({ text: "hi" })
      const per = ((performance.now() - t1) / 200) * 1000
      await s.close()
      console.log(
        c.label.padEnd(22),
        endpoint.url ? "http " : "stdio",
        s.toolCount,
        out,
        (t1 - t0).toFixed(1),
        "ms",
        per.toFixed(0),
        "µs/call",
        c.spokenVersion ? await c.spokenVersion(endpoint) : "",
      )
    } catch (e) {
      console.log(c.label, endpoint.url ? "http" : "stdio", "FAILED", e.message)
    }
  }
}
await http.close()
process.exit(0)
