// Contract § Elicitation: a server asking the user mid-call. The client advertises the
// capability only when `loadMcp` gets `waitFor`; `elicitation/create` reaches `waitFor`
// as a `Request`, and its `Answer` (or its failure) resumes the in-flight tools/call.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import {
  answerToElicitResult,
  elicitationToRequest,
  loadMcp,
  type Answer,
  type McpSource,
  type Request,
} from "toolnexus"
import { FORM_MESSAGE, FORM_SCHEMA, URL, URL_MESSAGE } from "./fixtures/elicit-constants.mjs"
import { fixture, NODE, poll, toolNamed } from "./helpers.js"

const TEST_TIMEOUT = { timeout: 30_000 }
const config = { ask: { command: [NODE, fixture("elicit-server.mjs")], timeout: 10_000 } }

/** Loads the elicitation fixture with `opts`, runs `fn`, and always closes the source. */
async function withSource<T>(opts: Parameters<typeof loadMcp>[1], fn: (source: McpSource) => Promise<T>): Promise<T> {
  const mcp = await loadMcp(config, opts)
  try {
    assert.deepEqual(mcp.status, { ask: "connected" })
    return await fn(mcp)
  } finally {
    await mcp.close()
  }
}

/** A `waitFor` that records every request and answers with `answer(request)`. */
function recorder(answer: (request: Request) => Answer | Promise<Answer>) {
  const requests: Request[] = []
  const waitFor = async (request: Request) => {
    requests.push(request)
    return answer(request)
  }
  return { requests, waitFor }
}

/** Calls `tool` and returns the elicitation result the fixture received, parsed. */
async function call(source: McpSource, tool: string, args: Record<string, unknown> = {}) {
  const res = await toolNamed(source, `ask_${tool}`).execute(args)
  assert.equal(res.isError, false, `ask_${tool} failed: ${res.output}`)
  return JSON.parse(res.output)
}

describe("capability", () => {
  test("without waitFor the elicitation capability is not advertised", TEST_TIMEOUT, async () => {
    await withSource(undefined, async (mcp) => {
      assert.equal(await call(mcp, "capabilities"), null)
    })
    await withSource({}, async (mcp) => {
      assert.equal(await call(mcp, "capabilities"), null)
    })
  })

  test("with waitFor the elicitation capability is advertised", TEST_TIMEOUT, async () => {
    const { waitFor } = recorder((r) => ({ id: r.id, ok: false, reason: "cancelled" }))
    await withSource({ waitFor }, async (mcp) => {
      const capability = await call(mcp, "capabilities")
      assert.equal(typeof capability, "object")
      assert.notEqual(capability, null, "no elicitation capability in the client's initialize")
    })
  })
})

describe("form mode", () => {
  test("reaches waitFor as an input request; ok resumes the call with accept + data", TEST_TIMEOUT, async () => {
    const { requests, waitFor } = recorder((r) => ({ id: r.id, ok: true, data: { name: "Ada" } }))
    await withSource({ waitFor }, async (mcp) => {
      const result = await call(mcp, "ask_name")
      assert.equal(requests.length, 1, "waitFor should be called exactly once per elicitation")
      const [request] = requests
      assert.equal(typeof request.id, "string")
      assert.ok(request.id.length > 0, "request id is empty")
      assert.deepEqual(request, { id: request.id, kind: "input", prompt: FORM_MESSAGE, data: { schema: FORM_SCHEMA } })
      assert.deepEqual(result, { action: "accept", content: { name: "Ada" } })
    })
  })

  test("ok without data accepts with empty content", TEST_TIMEOUT, async () => {
    const { requests, waitFor } = recorder((r) => ({ id: r.id, ok: true }))
    await withSource({ waitFor }, async (mcp) => {
      assert.deepEqual(await call(mcp, "ask_name"), { action: "accept", content: {} })
      assert.equal(requests.length, 1)
    })
  })

  test('not ok with reason "declined" declines', TEST_TIMEOUT, async () => {
    const { requests, waitFor } = recorder((r) => ({ id: r.id, ok: false, reason: "declined" }))
    await withSource({ waitFor }, async (mcp) => {
      assert.deepEqual(await call(mcp, "ask_name"), { action: "decline" })
      assert.equal(requests.length, 1)
    })
  })

  for (const reason of ["cancelled", "expired", undefined] as const) {
    test(`not ok with reason ${reason ?? "(none)"} cancels`, TEST_TIMEOUT, async () => {
      const { requests, waitFor } = recorder((r) => ({ id: r.id, ok: false, ...(reason ? { reason } : {}) }))
      await withSource({ waitFor }, async (mcp) => {
        assert.deepEqual(await call(mcp, "ask_name"), { action: "cancel" })
        assert.equal(requests.length, 1)
      })
    })
  }

  test("a waitFor that rejects answers cancel, and the call still completes", TEST_TIMEOUT, async () => {
    let calls = 0
    const waitFor = async (): Promise<Answer> => {
      calls++
      throw new Error("the user closed the dialog")
    }
    await withSource({ waitFor }, async (mcp) => {
      assert.deepEqual(await call(mcp, "ask_name"), { action: "cancel" })
      assert.equal(calls, 1)
    })
  })

  test("a waitFor that throws synchronously answers cancel", TEST_TIMEOUT, async () => {
    let calls = 0
    const waitFor = ((): Promise<Answer> => {
      calls++
      throw new Error("no UI available")
    }) as (request: Request) => Promise<Answer>
    await withSource({ waitFor }, async (mcp) => {
      assert.deepEqual(await call(mcp, "ask_name"), { action: "cancel" })
      assert.equal(calls, 1)
    })
  })

  test("two concurrent requests get different ids and each answer reaches its own call", TEST_TIMEOUT, async () => {
    const pending = new Map<string, { request: Request; resolve: (a: Answer) => void }>()
    const waitFor = (request: Request) =>
      new Promise<Answer>((resolve) => pending.set(request.prompt, { request, resolve }))
    await withSource({ waitFor }, async (mcp) => {
      const first = call(mcp, "ask_name", { message: "first" })
      const second = call(mcp, "ask_name", { message: "second" })
      assert.ok(await poll(() => pending.size === 2, 10_000), `waitFor saw ${pending.size} of 2 requests`)
      const a = pending.get("first")!
      const b = pending.get("second")!
      assert.notEqual(a.request.id, b.request.id, "two elicitations share one id")
      // Answer in reverse order: each call must get the answer to its own request.
      b.resolve({ id: b.request.id, ok: true, data: { name: "Bob" } })
      a.resolve({ id: a.request.id, ok: true, data: { name: "Alice" } })
      assert.deepEqual(await first, { action: "accept", content: { name: "Alice" } })
      assert.deepEqual(await second, { action: "accept", content: { name: "Bob" } })
    })
  })

  test("sequential requests get different ids", TEST_TIMEOUT, async () => {
    const { requests, waitFor } = recorder((r) => ({ id: r.id, ok: true, data: { name: "x" } }))
    await withSource({ waitFor }, async (mcp) => {
      await call(mcp, "ask_name")
      await call(mcp, "ask_name")
      await call(mcp, "authorize")
    })
    assert.equal(requests.length, 3)
    assert.equal(new Set(requests.map((r) => r.id)).size, 3, `ids: ${requests.map((r) => r.id).join(", ")}`)
  })
})

describe("URL mode", () => {
  test("reaches waitFor as an authorization request with the url", TEST_TIMEOUT, async () => {
    const { requests, waitFor } = recorder((r) => ({ id: r.id, ok: true }))
    await withSource({ waitFor }, async (mcp) => {
      const result = await call(mcp, "authorize")
      assert.equal(requests.length, 1)
      const [request] = requests
      assert.equal(typeof request.id, "string")
      assert.ok(request.id.length > 0, "request id is empty")
      assert.deepEqual(request, { id: request.id, kind: "authorization", prompt: URL_MESSAGE, url: URL })
      assert.equal(result.action, "accept")
    })
  })

  test("a declined authorization declines", TEST_TIMEOUT, async () => {
    const { waitFor } = recorder((r) => ({ id: r.id, ok: false, reason: "declined" }))
    await withSource({ waitFor }, async (mcp) => {
      assert.deepEqual(await call(mcp, "authorize"), { action: "decline" })
    })
  })
})

describe("elicitationToRequest", () => {
  const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }

  test("form mode becomes an input request carrying the schema", () => {
    const request = elicitationToRequest({ mode: "form", message: "Which city?", requestedSchema: schema })
    assert.equal(typeof request.id, "string")
    assert.ok(request.id.length > 0)
    assert.deepEqual(request, { id: request.id, kind: "input", prompt: "Which city?", data: { schema } })
  })

  test("no mode means form mode", () => {
    const request = elicitationToRequest({ message: "Which city?", requestedSchema: schema })
    assert.deepEqual(request, { id: request.id, kind: "input", prompt: "Which city?", data: { schema } })
  })

  test("URL mode becomes an authorization request carrying the url", () => {
    const request = elicitationToRequest({
      mode: "url",
      message: "Log in",
      url: "https://x.test/a?b=1",
      elicitationId: "e1",
    })
    assert.equal(typeof request.id, "string")
    assert.ok(request.id.length > 0)
    assert.deepEqual(request, { id: request.id, kind: "authorization", prompt: "Log in", url: "https://x.test/a?b=1" })
  })

  test("every call gets a fresh id", () => {
    const params = { mode: "form", message: "Again?", requestedSchema: schema }
    const ids = Array.from({ length: 5 }, () => elicitationToRequest(params).id)
    assert.equal(new Set(ids).size, ids.length, `ids: ${ids.join(", ")}`)
  })
})

describe("answerToElicitResult", () => {
  test("ok accepts with the data as content", () => {
    assert.deepEqual(answerToElicitResult({ id: "a", ok: true, data: { city: "Oslo", n: 2 } }), {
      action: "accept",
      content: { city: "Oslo", n: 2 },
    })
  })

  test("ok without data accepts with empty content", () => {
    assert.deepEqual(answerToElicitResult({ id: "a", ok: true }), { action: "accept", content: {} })
  })

  test('not ok with reason "declined" declines', () => {
    assert.deepEqual(answerToElicitResult({ id: "a", ok: false, reason: "declined" }), { action: "decline" })
  })

  test("any other not ok cancels", () => {
    assert.deepEqual(answerToElicitResult({ id: "a", ok: false, reason: "cancelled" }), { action: "cancel" })
    assert.deepEqual(answerToElicitResult({ id: "a", ok: false, reason: "expired" }), { action: "cancel" })
    assert.deepEqual(answerToElicitResult({ id: "a", ok: false }), { action: "cancel" })
  })

  test("data on a not-ok answer is not passed on", () => {
    assert.deepEqual(answerToElicitResult({ id: "a", ok: false, reason: "declined", data: { city: "Oslo" } }), {
      action: "decline",
    })
  })
})
