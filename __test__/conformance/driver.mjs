// The client the MCP conformance suite drives: `conformance client --command "node
// driver.mjs"` appends the scenario server's URL. It uses only toolnexus's public API,
// as a user would: load the server, call its tools, answer elicitations, close. With
// `--protocol=<revision>` before the URL, the server is spoken to in that revision only.
import { loadMcp } from "toolnexus"

const url = process.argv.at(-1)
const protocol = process.argv.find((arg) => arg.startsWith("--protocol="))?.slice("--protocol=".length)
const scenario = process.env.MCP_CONFORMANCE_SCENARIO
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}")

/**
 * A tool a scenario wants called while another call waits for input, to show the two
 * stay apart (SEP-2322: the unrelated call carries neither the other's responses nor
 * its requestState).
 */
const BETWEEN_ROUNDS = { "sep-2322-client-request-state": "test_mrtr_unrelated" }
const betweenRounds = { name: BETWEEN_ROUNDS[scenario], called: false }

/** Runs a tool and prints its result for the log the suite keeps. */
async function call(tool, name, args) {
  const result = await tool.execute(args)
  console.log(`${name}: ${result.isError ? "error: " : ""}${result.output}`)
}

let byName = new Map()

// An elicitation is accepted with no fields, so the schema's defaults are the answer;
// the first one waits for the scenario's between-rounds call, if it has one.
const waitFor = async (request) => {
  const tool = byName.get(betweenRounds.name)
  if (tool && !betweenRounds.called) {
    betweenRounds.called = true
    await call(tool, betweenRounds.name, {})
  }
  return { id: request.id, ok: true, data: {} }
}

/** Arguments that satisfy a listed schema's required properties, by their type. */
function argumentsFor(schema) {
  const sample = { number: 1, integer: 1, boolean: true, string: "conformance", array: [], object: {} }
  const args = {}
  for (const name of schema.required ?? []) args[name] = sample[schema.properties?.[name]?.type] ?? "conformance"
  return args
}

/**
 * What to call when the scenario names no calls: every tool with arguments its schema
 * requires, except that the schema-preservation scenario wants the schema toolnexus hands
 * out for its focal tool echoed back verbatim.
 */
function plannedCalls(byName) {
  const focal = byName.get("json_schema_2020_12_tool")
  return [...byName].map(([name, tool]) =>
    name === "json_schema_echo" && focal
      ? { name, arguments: { schema: focal.inputSchema } }
      : { name, arguments: argumentsFor(tool.inputSchema) },
  )
}

/**
 * The suite's authorization server approves at once: the person's part is following the
 * authorization URL's redirect, whose `Location` is where the browser would have landed.
 */
async function onAuthorize(authorizationUrl) {
  const response = await fetch(authorizationUrl, { redirect: "manual" })
  const location = response.headers.get("location")
  if (!location) throw new Error(`the authorization server answered ${response.status} without a redirect`)
  return new URL(location, authorizationUrl)
}

// The client the suite pre-registered, if any, and the metadata document URL it knows;
// the extension scenarios' grants, with the credentials the suite made for them.
const GRANTS = {
  "auth/client-credentials-basic": { grantType: "client_credentials" },
  "auth/client-credentials-jwt": { grantType: "client_credentials", privateKey: context.private_key_pem },
  "auth/wif-jwt-bearer": { grantType: "jwt-bearer", assertion: context.valid_jwt },
  "auth/enterprise-managed-authorization": {
    grantType: "enterprise",
    idp: {
      tokenEndpoint: context.idp_token_endpoint,
      clientId: context.idp_client_id,
      idToken: context.idp_id_token,
      issuer: context.idp_issuer,
    },
  },
}
const oauth = {
  clientId: context.client_id,
  clientSecret: context.client_secret,
  clientMetadataUrl: "https://conformance-test.local/client-metadata.json",
  ...GRANTS[scenario],
}
// Tokens live for this run only.
const tokens = new Map()
const tokenStore = {
  get: (key) => tokens.get(key),
  set: (key, value) => void tokens.set(key, value),
  delete: (key) => void tokens.delete(key),
}

/**
 * The SEP-2640 scenarios (Skills): list the skills; unless the scenario is about not
 * prefetching, load each one and read each of its files, as a host using them would. A
 * skill the scenario tampered with must be rejected at loadSkill, so none of its files is
 * read: the rejection is printed, and is the expected outcome. Skills load by name, the
 * listed entry being what they are checked against (the scenario servers answer no
 * skills/get, which a load by URI would ask).
 */
async function useSkills(mcp) {
  const skills = await mcp.listSkills()
  console.log(`skills: ${skills.map((s) => s.uri).join(", ") || "none"}`)
  if (scenario.endsWith("-no-prefetch")) return
  for (const { server, name, uri } of skills) {
    try {
      const skill = await mcp.loadSkill(server, name)
      console.log(`loaded ${uri}`)
      for (const file of skill.files) {
        const read = await skill.readFile(file.path)
        console.log(`read ${read.uri}: ${read.size} bytes`)
      }
    } catch (error) {
      console.log(`rejected ${uri}: ${error.code}: ${error.message}`)
    }
  }
}

const mcp = await loadMcp(
  { conformance: { url, timeout: 20_000, oauth, ...(protocol ? { protocol } : {}) } },
  { waitFor, oauth: { onAuthorize, tokenStore } },
)
try {
  if (mcp.status.conformance !== "connected") process.exitCode = 1
  if (scenario?.startsWith("sep-2640-client")) await useSkills(mcp)
  byName = new Map(mcp.tools.map((tool) => [tool.name.replace(/^conformance_/, ""), tool]))
  for (const planned of context.toolCalls ?? plannedCalls(byName)) {
    const tool = byName.get(planned.name)
    if (!tool || (planned.name === betweenRounds.name && betweenRounds.called)) continue
    await call(tool, planned.name, planned.arguments ?? {})
  }
} finally {
  await mcp.close()
}
