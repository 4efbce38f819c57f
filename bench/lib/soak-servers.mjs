// The soak run's remote servers (the test suite's fixtures: stateless streamable HTTP, HTTP
// with sessions, and an MCP server behind OAuth whose access tokens live 3 s), in a process
// of their own so that what they keep (their request logs) is not counted as the client's
// memory. Prints their URLs as one JSON line; when its stdin ends, prints what the OAuth
// server was asked as another, closes them and exits.
import { createFixtureServer } from "../../__test__/fixtures/catalog.mjs"
import { startHttpServer } from "../../__test__/fixtures/http-server.mjs"
import { startOAuthServer } from "../../__test__/fixtures/oauth-server.mjs"
import { startStatefulHttp } from "../../__test__/fixtures/traffic-http.mjs"

const stateless = await startHttpServer()
const sessions = await startStatefulHttp(() => createFixtureServer())
const oauth = await startOAuthServer({ expiresIn: 3 })
process.stdout.write(JSON.stringify({ stateless: stateless.url, sessions: sessions.url, oauth: oauth.url }) + "\n")

process.stdin.resume().on("end", async () => {
  const grants = {}
  for (const { grant } of oauth.log.token) grants[grant] = (grants[grant] ?? 0) + 1
  const calls = oauth.log.mcp.filter((r) => r.method === "tools/call").length
  process.stdout.write(JSON.stringify({ grants, calls }) + "\n")
  await Promise.all([stateless.close(), sessions.close(), oauth.close()])
  process.exit(0)
})
