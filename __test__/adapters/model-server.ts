// A stand-in for a model provider's HTTP API on 127.0.0.1: it records each request's JSON
// body and answers with the next of the replies it was given.
import http from "node:http"
import type { AddressInfo } from "node:net"

export interface ModelServer {
  url: string
  requests: any[]
  close(): Promise<void>
}

export async function modelServer(replies: Array<(body: any) => unknown>): Promise<ModelServer> {
  const requests: any[] = []
  const server = http.createServer((req, res) => {
    let data = ""
    req.on("data", (chunk) => (data += chunk))
    req.on("end", () => {
      const body = data ? JSON.parse(data) : undefined
      const reply = replies[requests.length]
      requests.push({ path: req.url, body })
      if (reply === undefined) {
        res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"no more replies"}}')
        return
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply(body)))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

const usage = {
  input_tokens: 1,
  output_tokens: 1,
  total_tokens: 2,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens_details: { reasoning_tokens: 0 },
}

/** OpenAI Responses API replies. */
export const responses = {
  calls:
    (...calls: Array<{ id: string; name: string; arguments: object }>) =>
    () => ({
      id: "resp_1",
      object: "response",
      created_at: 1,
      status: "completed",
      model: "gpt-test",
      output: calls.map((c, i) => ({
        type: "function_call",
        id: `fc_${i}`,
        call_id: c.id,
        name: c.name,
        arguments: JSON.stringify(c.arguments),
        status: "completed",
      })),
      usage,
    }),
  text: (text: string) => () => ({
    id: "resp_2",
    object: "response",
    created_at: 1,
    status: "completed",
    model: "gpt-test",
    output: [
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
    usage,
  }),
}

/** OpenAI Chat Completions replies. */
export const chat = {
  calls:
    (...calls: Array<{ id: string; name: string; arguments: object }>) =>
    () => ({
      id: "chatcmpl_1",
      object: "chat.completion",
      created: 1,
      model: "gpt-test",
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: JSON.stringify(c.arguments) },
            })),
          },
        },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }),
  text: (text: string) => () => ({
    id: "chatcmpl_2",
    object: "chat.completion",
    created: 1,
    model: "gpt-test",
    choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: text } }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }),
}

/** Anthropic Messages replies. */
export const messages = {
  uses:
    (...uses: Array<{ id: string; name: string; input: object }>) =>
    () => ({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: uses.map((u) => ({ type: "tool_use", ...u })),
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    }),
  text: (text: string) => () => ({
    id: "msg_2",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  }),
}
