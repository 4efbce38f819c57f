// Remote MCP servers over HTTP: streamable HTTP (stateful and stateless, JSON and SSE
// answers), the legacy HTTP+SSE fallback, bearer headers from the environment, stream
// resumption with Last-Event-ID, expired sessions, and failures isolated per server.
// Every fixture server listens on 127.0.0.1 at an ephemeral port.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { listMcpTools, loadMcp, type McpSource } from "toolnexus"
import { startLegacy } from "./fixtures/remote-legacy.mjs"
import { deadPort, startRejecting, startSilent, startStatus } from "./fixtures/remote-plain.mjs"
import { startStreamable } from "./fixtures/remote-streamable.mjs"
import { remoteTools, type LogEntry } from "./fixtures/remote-tools.mjs"
import { assertCleanExit, failureLines, local, names, runNode, timed, toolNamed } from "./helpers.js"

const TOOL_NAMES = remoteTools.map((x) => x.name)
const prefixed = (server: string) => TOOL_NAMES.map((n) => `${server}_${n}`)
const calls = (log: LogEntry[], method = "tools/call") => log.filter((e) => e.rpc.includes(method))
/** Every test gets a generous bound so a hang fails the test instead of the run. */
const T = { timeout: 60_000 }
/** A POST of the session proper: not the opening (`server/discover`, then `initialize` for a 2025-era server). */
const isSessionPost = (e: LogEntry) =>
  e.method === "POST" && !e.rpc.includes("initialize") && !e.rpc.includes("server/discover")

/** Runs `fn` with a loaded source, closing it afterwards. */
async function withSource<R>(input: object, fn: (source: McpSource) => Promise<R>): Promise<R> {
  const source = await loadMcp(input)
  try {
    return await fn(source)
  } finally {
    await source.close()
  }
}

/** Asserts a successful echo through `tool` (the fixture's echo returns its args as JSON). */
async function assertEcho(source: McpSource, server: string) {
  const res = await toolNamed(source, `${server}_echo`).execute({ text: `via ${server}` })
  assert.equal(res.isError, false, res.output)
  assert.deepEqual(JSON.parse(res.output), { text: `via ${server}` })
  assert.equal(res.metadata?.server, server)
}

describe("streamable HTTP", () => {
  for (const stateful of [true, false]) {
    for (const json of [true, false]) {
      const mode = `${stateful ? "stateful" : "stateless"}, ${json ? "JSON" : "SSE"} responses`
      test(`${mode}: tools listed and called`, T, async () => {
        const srv = await startStreamable({ stateful, json })
        try {
          const inv = await listMcpTools({ r: { url: srv.url } })
          assert.deepEqual(inv.status, { r: "connected" })
          assert.deepEqual(
            inv.tools.r.map((x) => x.name),
            TOOL_NAMES,
          )

          await withSource({ r: { url: srv.url } }, async (source) => {
            assert.deepEqual(source.status, { r: "connected" })
            assert.deepEqual(names(source), prefixed("r"))
            assert.equal(toolNamed(source, "r_echo").source, "mcp")
            await assertEcho(source, "r")

            const session = await toolNamed(source, "r_session").execute({})
            assert.equal(session.isError, false, session.output)
            if (stateful) {
              // the loadMcp connection's session (listMcpTools had its own before it)
              const sid = srv.issued.at(-1)
              assert.ok(sid, "the server issued no session id")
              assert.equal(session.output, sid, "the call did not arrive on the session the server issued")
              const after = srv.log.filter((e) => isSessionPost(e) && e.sessionId !== undefined)
              assert.ok(after.length > 0)
              assert.ok(
                srv.log.filter((e) => isSessionPost(e)).every((e) => e.sessionId !== undefined),
                `a POST after initialize lacked Mcp-Session-Id: ${JSON.stringify(srv.log)}`,
              )
            } else {
              assert.equal(session.output, "none")
              assert.deepEqual(srv.issued, [])
            }
            // The answers really came in the mode under test.
            const answered = calls(srv.log)
            assert.ok(answered.length >= 2, JSON.stringify(srv.log))
            for (const e of answered) {
              assert.equal(e.status, 200, JSON.stringify(e))
              assert.match(String(e.contentType), json ? /application\/json/ : /text\/event-stream/)
            }
          })
        } finally {
          await srv.close()
        }
      })
    }
  }

  test(
    "a stateful session sends the negotiated protocol version after initialize, and DELETEs the session on close",
    T,
    async () => {
      const srv = await startStreamable({ stateful: true })
      try {
        await withSource({ there: { type: "remote", url: srv.url } }, async (source) => {
          await assertEcho(source, "there")
        })
        const posts = srv.log.filter((e) => isSessionPost(e))
        assert.ok(
          posts.length > 0 && posts.every((e) => typeof e.protocolVersion === "string" && e.protocolVersion.length > 0),
          JSON.stringify(srv.log),
        )
        const session = posts[0].sessionId
        assert.ok(
          srv.log.some((e) => e.method === "DELETE" && e.sessionId === session),
          `no DELETE of the session: ${JSON.stringify(srv.log)}`,
        )
      } finally {
        await srv.close()
      }
    },
  )

  test("one loadMcp call mixes a local stdio server and a remote one", T, async () => {
    const srv = await startStreamable({ stateful: true })
    try {
      await withSource({ here: local('--tools=["echo"]'), there: { type: "remote", url: srv.url } }, async (source) => {
        assert.deepEqual(source.status, { here: "connected", there: "connected" })
        assert.deepEqual(names(source), ["here_echo", ...prefixed("there")])
        await assertEcho(source, "here")
        await assertEcho(source, "there")
      })
    } finally {
      await srv.close()
    }
  })
})

describe("legacy HTTP+SSE fallback (2024-11-05)", () => {
  for (const postStatus of [405, 404, 200]) {
    test(`a streamable POST answered ${postStatus} (no MCP answer): falls back to GET /sse and works`, T, async () => {
      const srv = await startLegacy({ postStatus })
      try {
        await withSource({ old: { url: srv.url } }, async (source) => {
          assert.deepEqual(source.status, { old: "connected" })
          assert.deepEqual(names(source), prefixed("old"))
          await assertEcho(source, "old")
        })
        // It tried streamable HTTP first, then opened the event stream and posted to
        // the endpoint the `endpoint` event named.
        const first = srv.log[0]
        assert.equal(first?.method, "POST", JSON.stringify(srv.log))
        assert.equal(first.path, "/sse")
        assert.equal(first.status, postStatus)
        assert.ok(
          srv.log.some((e) => e.method === "GET" && e.path === "/sse" && e.status === 200),
          `no GET /sse stream: ${JSON.stringify(srv.log)}`,
        )
        const posted = srv.log.filter((e) => e.method === "POST" && e.path.startsWith("/messages?sessionId="))
        assert.ok(
          posted.some((e) => e.rpc.includes("initialize")),
          JSON.stringify(srv.log),
        )
        assert.ok(
          posted.some((e) => e.rpc.includes("tools/call")),
          JSON.stringify(srv.log),
        )

        const inv = await listMcpTools({ old: { url: srv.url } })
        assert.deepEqual(inv.status, { old: "connected" })
        assert.deepEqual(
          inv.tools.old.map((x) => x.name),
          TOOL_NAMES,
        )
      } finally {
        await srv.close()
      }
    })
  }
})

describe("bearer token from the environment", () => {
  test("the right token connects and calls", T, async () => {
    const token = "tn-right-token-7f3a"
    const srv = await startStreamable({ stateful: true, token })
    process.env.TN_REMOTE_TOKEN = token
    try {
      await withSource(
        { authed: { url: srv.url, headers: { Authorization: "Bearer ${TN_REMOTE_TOKEN}" } } },
        async (source) => {
          assert.deepEqual(source.status, { authed: "connected" })
          await assertEcho(source, "authed")
        },
      )
    } finally {
      delete process.env.TN_REMOTE_TOKEN
      await srv.close()
    }
  })

  test("a wrong token fails that server only, with a reason saying unauthorized", T, async () => {
    const s401 = await startStreamable({ stateful: true, token: "expected-token-401" })
    const s403 = await startStreamable({ token: "expected-token-403", authStatus: 403 })
    try {
      const header = { Authorization: "Bearer ${TN_WRONG_TOKEN}" }
      const run = await runNode(
        `
        import { loadMcp } from "toolnexus"
        const source = await loadMcp(${JSON.stringify({
          before: local('--tools=["echo"]'),
          a401: { url: s401.url, headers: header },
          a403: { url: s403.url, headers: header },
        })})
        console.log(JSON.stringify({ status: source.status, names: source.tools.map((t) => t.name) }))
        await source.close()
      `,
        { env: { ...process.env, TN_WRONG_TOKEN: "wrong-token-d41d8cd9" } },
      )
      assertCleanExit(run)
      const out = JSON.parse(run.stdout)
      assert.deepEqual(out.status, { before: "connected", a401: "failed", a403: "failed" })
      assert.deepEqual(out.names, ["before_echo"])
      const l401 = failureLines(run.stderr, "a401")
      const l403 = failureLines(run.stderr, "a403")
      assert.equal(l401.length, 1, run.stderr)
      assert.equal(l403.length, 1, run.stderr)
      assert.match(l401[0], /unauthori[sz]ed/i)
      assert.match(l401[0], /401/)
      assert.match(l403[0], /unauthori[sz]ed|forbidden/i)
      assert.match(l403[0], /403/)
      assert.ok(!run.stderr.includes("wrong-token-d41d8cd9"), run.stderr)
      // the server really saw the (wrong) header: the failure is the 401/403, not a missing header
      assert.ok(s401.log.length > 0 && s401.log.every((e) => e.status === 401), JSON.stringify(s401.log))
      assert.ok(s403.log.length > 0 && s403.log.every((e) => e.status === 403), JSON.stringify(s403.log))
    } finally {
      await s401.close()
      await s403.close()
    }
  })

  test("header secrets never appear in stdout, stderr, error messages or tool output", T, async () => {
    const right = "SECRET-right-9c1e4b7a0d"
    const wrong = "SECRET-wrong-5f2d8e6c3b"
    const good = await startStreamable({ stateful: true, token: right })
    const bad = await startStreamable({ token: right })
    const dead = await deadPort()
    try {
      const config = {
        good: { url: good.url, headers: { Authorization: "Bearer ${TN_RIGHT}" } },
        bad: { url: bad.url, headers: { Authorization: "Bearer ${TN_WRONG}" } },
        refused: {
          url: `http://127.0.0.1:${dead}/mcp`,
          headers: { Authorization: "Bearer ${TN_RIGHT}", "X-Api-Key": "${TN_WRONG}" },
        },
      }
      const run = await runNode(
        `
        import { listMcpTools, loadMcp } from "toolnexus"
        const config = ${JSON.stringify(config)}
        const show = (label, value) => console.log(label, JSON.stringify(value))
        const source = await loadMcp(config)
        show("status", source.status)
        show("tools", source.tools)
        const tool = (n) => source.tools.find((t) => t.name === n)
        show("echo", await tool("good_echo").execute({ text: "hello" }))
        show("dropped", await tool("good_drop_connection").execute({}))
        await source.close()
        show("after close", await tool("good_echo").execute({ text: "late" }))
        const inv = await listMcpTools(config)
        show("inventory", inv)
        try {
          await loadMcp(config, { signal: AbortSignal.abort(new Error("aborted on purpose")) })
        } catch (err) {
          show("abort", { message: String(err?.message), stack: String(err?.stack) })
        }
      `,
        { env: { ...process.env, TN_RIGHT: right, TN_WRONG: wrong, RUST_LOG: "trace", RUST_BACKTRACE: "1" } },
      )
      assertCleanExit(run)
      // sanity: the run did what it says
      assert.match(run.stdout, /^status \{"good":"connected","bad":"failed","refused":"failed"\}$/m, run.stdout)
      assert.match(run.stdout, /^echo \{.*hello/m, run.stdout)
      assert.match(run.stdout, /^dropped \{.*"isError":true/m, run.stdout)
      assert.match(run.stdout, /^after close \{.*"isError":true/m, run.stdout)
      assert.ok(failureLines(run.stderr, "bad").length >= 2, run.stderr) // loadMcp + listMcpTools
      assert.ok(failureLines(run.stderr, "refused").length >= 2, run.stderr)
      for (const secret of [right, wrong]) {
        assert.ok(!run.stdout.includes(secret), `${secret} in stdout:\n${run.stdout}`)
        assert.ok(!run.stderr.includes(secret), `${secret} in stderr:\n${run.stderr}`)
      }
      // and the right token did reach the good server
      assert.ok(good.log.some((e) => e.status === 200))
    } finally {
      await good.close()
      await bad.close()
    }
  })
})

describe("stream resumption", () => {
  test("an SSE response stream dropped mid-call resumes with Last-Event-ID and the call completes", T, async () => {
    const srv = await startStreamable({ resumable: true, retryInterval: 200 })
    try {
      await withSource({ res: { url: srv.url, timeout: 20_000 } }, async (source) => {
        const result = await toolNamed(source, "res_drop_stream").execute({})
        assert.equal(result.isError, false, result.output)
        assert.equal(result.output, "finished after the stream was dropped")
        assert.equal(srv.drops.length, 1, "the fixture never dropped the stream")
        // Resumed, not re-sent: one tools/call POST, then a GET carrying the last event id.
        assert.equal(calls(srv.log).length, 1, JSON.stringify(srv.log))
        const resumes = srv.log.filter((e) => e.method === "GET" && e.lastEventId !== undefined)
        assert.ok(resumes.length >= 1, `no GET with Last-Event-ID: ${JSON.stringify(srv.log)}`)
        assert.ok(
          resumes.some((e) => e.status === 200 && e.sessionId === srv.issued.at(-1)),
          `no successful resume on the session: ${JSON.stringify(resumes)}`,
        )
        // the connection is still usable afterwards
        await assertEcho(source, "res")
      })
    } finally {
      await srv.close()
    }
  })
})

describe("session expiry", () => {
  for (const json of [false, true]) {
    test(
      `a 404 for an expired session id re-initializes once and the call succeeds (${json ? "JSON" : "SSE"} responses)`,
      T,
      async () => {
        const srv = await startStreamable({ stateful: true, json })
        try {
          await withSource({ exp: { url: srv.url, timeout: 20_000 } }, async (source) => {
            const first = await toolNamed(source, "exp_session").execute({})
            assert.equal(first.isError, false, first.output)
            assert.deepEqual(srv.issued, [first.output])
            assert.equal(srv.initializes(), 1)

            await srv.expireSessions()
            const second = await toolNamed(source, "exp_session").execute({})
            assert.equal(second.isError, false, second.output)
            assert.equal(srv.issued.length, 2, `sessions issued: ${JSON.stringify(srv.issued)}`)
            assert.equal(second.output, srv.issued[1], "the retried call did not run on the new session")
            assert.equal(srv.initializes(), 2)
            assert.ok(
              srv.log.some((e) => e.sessionId === srv.issued[0] && e.status === 404),
              `the old session id never got its 404: ${JSON.stringify(srv.log)}`,
            )

            // settled on the new session: no more re-initializing
            await assertEcho(source, "exp")
            assert.equal(srv.initializes(), 2)
          })
        } finally {
          await srv.close()
        }
      },
    )
  }

  test("a server that keeps answering 404 gets one re-initialize per call, then an error result", T, async () => {
    const srv = await startStreamable({ stateful: true })
    try {
      await withSource({ gone: { url: srv.url, timeout: 10_000 } }, async (source) => {
        srv.rejectAllSessions()
        const { value: res } = await timed(() => toolNamed(source, "gone_echo").execute({ text: "x" }))
        assert.equal(res.isError, true, res.output)
        assert.match(res.output, /"gone"/)
        assert.ok(srv.initializes() <= 2, `initialize sent ${srv.initializes()} times`)
      })
    } finally {
      await srv.close()
    }
  })
})

describe("failures are isolated per server", () => {
  /**
   * Loads { before: local, bad, after: remote } in a child Node and checks that only
   * `bad` failed, with one stderr line matching `reason`.
   */
  async function isolated(bad: object, reason: RegExp) {
    const good = await startStreamable()
    try {
      const config = { before: local('--tools=["echo"]'), bad, after: { url: good.url } }
      const run = await runNode(`
        import { listMcpTools, loadMcp } from "toolnexus"
        const config = ${JSON.stringify(config)}
        const source = await loadMcp(config)
        const echo = await source.tools.find((t) => t.name === "after_echo")?.execute({ text: "still here" })
        console.log(JSON.stringify({ status: source.status, names: source.tools.map((t) => t.name), echo }))
        await source.close()
      `)
      assertCleanExit(run)
      const out = JSON.parse(run.stdout)
      assert.deepEqual(out.status, { before: "connected", bad: "failed", after: "connected" })
      assert.deepEqual(out.names, ["before_echo", ...prefixed("after")])
      assert.equal(out.echo?.isError, false, JSON.stringify(out.echo))
      const lines = failureLines(run.stderr, "bad")
      assert.equal(lines.length, 1, run.stderr)
      assert.match(lines[0], reason)
      assert.deepEqual(failureLines(run.stderr, "before"), [])
      assert.deepEqual(failureLines(run.stderr, "after"), [])
      return run
    } finally {
      await good.close()
    }
  }

  test("connection refused", T, async () => {
    const port = await deadPort()
    await isolated({ url: `http://127.0.0.1:${port}/mcp` }, /refused|connect/i)
  })

  test("unresolvable host", T, async () => {
    await isolated({ url: "http://nonexistent.invalid/mcp" }, /nonexistent\.invalid|resolve|dns|lookup/i)
  })

  test("404 on initialize (no MCP server at that URL, legacy fallback included)", T, async () => {
    const srv = await startStatus(404)
    try {
      await isolated({ url: srv.url }, /404/)
      assert.ok(
        srv.log.some((e) => e.method === "POST"),
        JSON.stringify(srv.log),
      )
    } finally {
      await srv.close()
    }
  })

  test("500 on initialize", T, async () => {
    const srv = await startStatus(500)
    try {
      await isolated({ url: srv.url }, /500/)
    } finally {
      await srv.close()
    }
  })

  test("a server slower than its timeout", T, async () => {
    const srv = await startSilent()
    try {
      const run = await isolated({ url: srv.url, timeout: 1_000 }, /time[sd]? ?out|within 1000 ?ms/i)
      // the 1 s timeout, not the 30 s default, ended it
      assert.ok(run.ms < 20_000, `took ${run.ms} ms`)
      assert.ok(srv.log.length > 0, "the client never reached the server")
    } finally {
      await srv.close()
    }
  })

  // A JSON-RPC error without an id still answers the request its POST carried.
  test(
    "tools/list answered with HTTP 400 and an id-less JSON-RPC error fails that server at once, with the server's message",
    T,
    async () => {
      const srv = await startRejecting("tools/list")
      try {
        const { ms } = await timed(() =>
          isolated({ url: srv.url, timeout: 30_000 }, /tools\/list.*No valid session ID provided/),
        )
        assert.ok(ms < 20_000, `the rejection was noticed only after ${ms} ms`)
      } finally {
        await srv.close()
      }
    },
  )

  test(
    "tools/call answered with HTTP 400 and an id-less JSON-RPC error resolves at once, with the server's message",
    T,
    async () => {
      const srv = await startRejecting("tools/call")
      try {
        await withSource({ rej: { url: srv.url, timeout: 30_000 } }, async (source) => {
          const { value: res, ms } = await timed(() => toolNamed(source, "rej_t").execute({}))
          assert.equal(res.isError, true, res.output)
          assert.match(res.output, /^MCP server "rej" .*tools\/call "t".*No valid session ID provided/)
          assert.ok(ms < 20_000, `the rejection was noticed only after ${ms} ms`)
        })
      } finally {
        await srv.close()
      }
    },
  )

  test("a server gone after loading: the call's error says it cannot be reached, in words", T, async () => {
    const srv = await startStreamable()
    await withSource({ gone: { url: srv.url, timeout: 20_000 } }, async (source) => {
      await assertEcho(source, "gone")
      await srv.close()
      const res = await toolNamed(source, "gone_echo").execute({ text: "x" })
      assert.equal(res.isError, true, res.output)
      assert.match(res.output, /^MCP server "gone" .*tools\/call "echo".*could not be reached/)
      // rmcp's own text for a failed send names Rust types, which mean nothing to a user.
      assert.doesNotMatch(res.output, /::|Transport \[/)
    })
  })

  test("a server that closes the connection mid-call: execute resolves an error naming the server", T, async () => {
    const srv = await startStreamable()
    try {
      await withSource(
        { flaky: { url: srv.url, timeout: 20_000 }, other: local('--tools=["echo"]') },
        async (source) => {
          assert.deepEqual(source.status, { flaky: "connected", other: "connected" })
          const { value: res, ms } = await timed(() => toolNamed(source, "flaky_drop_connection").execute({}))
          assert.equal(res.isError, true, res.output)
          assert.match(res.output, /"flaky"/)
          assert.ok(ms < 15_000, `the dropped connection was noticed only after ${ms} ms`)
          await assertEcho(source, "other")
        },
      )
    } finally {
      await srv.close()
    }
  })
})
