// MCP Skills (SEP-2640): listSkills and loadSkill of loadMcp's source and of store views,
// in both eras. Against a server written with the official SDK v2 (fixtures/skills-server.mjs):
// every entry as listed, a loaded skill's frontmatter, body and files, supporting files read
// on demand and verified, text and blob. Against a hand-written one that lies
// (fixtures/skills-hostile.mjs, which reports what it was asked): nothing is read before
// loadSkill, a tampered SKILL.md (digest, size, frontmatter) or supporting file is rejected,
// limits are checked before any read, invalid entries reject the listing, duplicate names
// ask for the URI, a "dynamic" skill loads unverified. A server without the extension lists none.
import assert from "node:assert/strict"
import { createHash } from "node:crypto"
import { describe, test, type TestContext } from "node:test"
import { createMcpStore, type McpSource, type ServerConfig } from "toolnexus"
import * as hostile from "./fixtures/skills-hostile.mjs"
import {
  BLANK_BYTES,
  FILES,
  FORMS_MD,
  PDF_BODY,
  PDF_FRONTMATTER,
  PDF_SKILL_MD,
  PDF_URI,
  REFUNDS_BODY,
  REFUNDS_FRONTMATTER,
  REFUNDS_SKILL_MD,
  REFUNDS_URI,
} from "./fixtures/skills-server.mjs"
import { fixture, NODE, openSource, poll, toolNamed } from "./helpers.js"

const ERAS = ["2025-11-25", "2026-07-28"] as const
type Era = (typeof ERAS)[number]
const T = { timeout: 60_000 }

const sdkServer = (protocol: Era): ServerConfig => ({ command: [NODE, fixture("skills-server.mjs")], protocol })
const hostileServer = (mode: string, protocol: Era): ServerConfig => ({
  command: [NODE, fixture("skills-hostile.mjs"), mode],
  protocol,
})
/** SDK v2, resources and prompts but no skills extension. */
const noSkills = (protocol: Era): ServerConfig => ({ command: [NODE, fixture("offer-server.mjs")], protocol })

const SKILL_REJECTED = "TOOLNEXUS_SKILL_REJECTED"

/** Loads `config`, failing with the statuses unless every server connected. */
async function open(t: TestContext, config: Record<string, ServerConfig>): Promise<McpSource> {
  const source = await openSource(t, config)
  for (const [name, status] of Object.entries(source.status)) assert.equal(status, "connected", name)
  return source
}

/** What the hostile server named `server` was asked: resources/read URIs, or skills/get ones. */
async function asked(source: McpSource, what: "reads" | "gets", server = "hostile"): Promise<string[]> {
  const result = await toolNamed(source, `${server}_${what}`).execute({})
  return JSON.parse(result.output)
}

/** Asserts that `work` rejects with an Error of `code` whose message matches every pattern. */
async function rejectsWith(work: Promise<unknown>, code: string, ...patterns: RegExp[]): Promise<void> {
  await assert.rejects(work, (error: Error & { code?: string }) => {
    assert.ok(error instanceof Error, String(error))
    assert.equal(error.code, code, error.message)
    for (const pattern of patterns) assert.match(error.message, pattern)
    return true
  })
}

const digestOf = (content: string | Uint8Array) => `sha256:${createHash("sha256").update(content).digest("hex")}`
/** The listed resources of the skill under `dir` of the SDK fixture, as the SDK computes them. */
const listedFiles = (dir: string) =>
  Object.entries(FILES)
    .filter(([path]) => path.startsWith(`${dir}/`))
    .map(([path, content]) => ({
      uri: `skill://${path}`,
      digest: digestOf(content),
      size: typeof content === "string" ? Buffer.byteLength(content) : content.byteLength,
    }))
    .sort((a, b) => a.uri.localeCompare(b.uri))
const byUri = <T extends { uri: string }>(list: T[]) => [...list].sort((a, b) => a.uri.localeCompare(b.uri))

/** The body a loaded skill gives: what follows the frontmatter block (a blank line may lead). */
function assertBody(body: string, skillMd: string, expected: string) {
  assert.ok(skillMd.endsWith(body), `the body is the end of SKILL.md: ${JSON.stringify(body)}`)
  assert.equal(body.trim(), expected.trim())
}

for (const era of ERAS) {
  describe(`skills of an SDK v2 server (${era})`, () => {
    test("listSkills: every entry as listed, from servers that declare the extension only", T, async (t) => {
      const source = await open(t, { skills: sdkServer(era), bare: noSkills(era) })
      const skills = byUri(await source.listSkills())
      assert.deepEqual(
        skills.map((s) => [s.server, s.name, s.uri]),
        [
          ["skills", "refunds", REFUNDS_URI],
          ["skills", "pdf-processing", PDF_URI],
        ],
      )
      const [refunds, pdf] = skills
      assert.deepEqual(pdf.frontmatter, PDF_FRONTMATTER)
      assert.deepEqual(byUri(pdf.resources as Array<{ uri: string }>), listedFiles("pdf-processing"))
      assert.deepEqual(refunds.frontmatter, REFUNDS_FRONTMATTER)
      assert.deepEqual(refunds.resources, listedFiles("acme/billing/refunds"))
      assert.deepEqual(byUri(await source.listSkills("skills")), skills)
      assert.deepEqual(byUri(await source.listSkills("skills", { cacheMode: "bypass" })), skills)
      assert.deepEqual(await source.listSkills("bare"), [])
      await rejectsWith(source.listSkills("nope"), "TOOLNEXUS_UNKNOWN_SERVER", /"nope"/)
    })

    test("loadSkill: frontmatter, body and files; readFile verifies text and blobs", T, async (t) => {
      const source = await open(t, { skills: sdkServer(era) })
      const pdf = await source.loadSkill("skills", "pdf-processing")
      assert.equal(pdf.server, "skills")
      assert.equal(pdf.uri, PDF_URI)
      assert.equal(pdf.name, "pdf-processing")
      assert.equal(pdf.verified, true)
      assert.deepEqual(pdf.frontmatter, PDF_FRONTMATTER)
      assertBody(pdf.body, PDF_SKILL_MD, PDF_BODY)
      // SKILL.md itself is not among the supporting files.
      assert.deepEqual(
        [...pdf.files].sort((a, b) => a.path.localeCompare(b.path)),
        [
          { path: "assets/blank.bin", uri: "skill://pdf-processing/assets/blank.bin", size: BLANK_BYTES.byteLength },
          {
            path: "references/FORMS.md",
            uri: "skill://pdf-processing/references/FORMS.md",
            size: Buffer.byteLength(FORMS_MD),
          },
        ],
      )

      const forms = await pdf.readFile("references/FORMS.md")
      assert.equal(forms.text, FORMS_MD)
      assert.equal(forms.path, "references/FORMS.md")
      assert.equal(forms.uri, "skill://pdf-processing/references/FORMS.md")
      assert.equal(forms.size, Buffer.byteLength(FORMS_MD))
      assert.equal(forms.mimeType, "text/markdown")
      // The full URI names the same file.
      assert.equal((await pdf.readFile("skill://pdf-processing/references/FORMS.md")).text, FORMS_MD)
      // Bytes that are not UTF-8 come as the base64 blob the server sent, verified all the same.
      const blank = await pdf.readFile("assets/blank.bin")
      assert.equal(blank.text, undefined)
      assert.deepEqual(new Uint8Array(Buffer.from(blank.blob!, "base64")), BLANK_BYTES)
      assert.equal(blank.size, BLANK_BYTES.byteLength)

      for (const path of ["references/NOPE.md", "../acme/billing/refunds/SKILL.md", "skill://elsewhere/x.md"]) {
        await rejectsWith(pdf.readFile(path), SKILL_REJECTED, /not in the listing/)
      }
    })

    test("loadSkill: a nested skill by name or by URI; unknown names and servers", T, async (t) => {
      const source = await open(t, { skills: sdkServer(era) })
      const refunds = await source.loadSkill("skills", "refunds")
      assert.equal(refunds.uri, REFUNDS_URI)
      assert.deepEqual(refunds.frontmatter, REFUNDS_FRONTMATTER)
      assert.deepEqual(refunds.files, [])
      assertBody(refunds.body, REFUNDS_SKILL_MD, REFUNDS_BODY)
      const byItsUri = await source.loadSkill("skills", REFUNDS_URI)
      assert.equal(byItsUri.name, "refunds")
      assert.equal(byItsUri.body, refunds.body)
      await rejectsWith(source.loadSkill("skills", "nope"), "TOOLNEXUS_UNKNOWN_SKILL", /nope/)
      await rejectsWith(source.loadSkill("nope", "refunds"), "TOOLNEXUS_UNKNOWN_SERVER", /"nope"/)
    })
  })

  describe(`skills of a server that lies (${era})`, () => {
    test("nothing is read before loadSkill, then only what is asked for", T, async (t) => {
      const source = await open(t, { hostile: hostileServer("clean", era) })
      const [entry] = await source.listSkills()
      assert.equal(entry.name, "pdf-processing")
      await source.listSkills("hostile", { cacheMode: "refresh" })
      assert.deepEqual(await asked(source, "reads"), [], "listing reads no file")

      const skill = await source.loadSkill("hostile", "pdf-processing")
      assertBody(skill.body, hostile.SKILL_MD, hostile.BODY)
      assert.deepEqual(await asked(source, "reads"), [hostile.SKILL_URI], "loading reads SKILL.md only")
      assert.equal((await skill.readFile("references/FORMS.md")).text, hostile.FORMS_MD)
      assert.deepEqual(await asked(source, "reads"), [hostile.SKILL_URI, hostile.FORMS_URI])
      // A file the listing does not name is refused without asking the server.
      await rejectsWith(skill.readFile("references/OTHER.md"), SKILL_REJECTED, /not in the listing/)
      assert.deepEqual(await asked(source, "reads"), [hostile.SKILL_URI, hostile.FORMS_URI])
    })

    test("a skill that is not listed loads by its URI, through skills/get", T, async (t) => {
      const source = await open(t, { hostile: hostileServer("clean", era) })
      await rejectsWith(source.loadSkill("hostile", "hidden"), "TOOLNEXUS_UNKNOWN_SKILL", /hidden/)
      const hidden = await source.loadSkill("hostile", hostile.HIDDEN_URI)
      assert.equal(hidden.name, "hidden")
      assert.equal(hidden.verified, true)
      assert.equal(hidden.body.trim(), "Hidden body.")
      assert.ok((await asked(source, "gets")).includes(hostile.HIDDEN_URI))
    })

    // SKILL.md is read, found wrong and refused: the supporting file is never read.
    for (const [mode, word] of [
      ["tamper-digest", /digest/],
      ["tamper-size", /size/],
      ["tamper-frontmatter", /frontmatter/],
    ] as const) {
      test(`${mode}: loadSkill rejects naming the server, the skill and the ${word.source}`, T, async (t) => {
        const source = await open(t, { hostile: hostileServer(mode, era) })
        await rejectsWith(
          source.loadSkill("hostile", "pdf-processing"),
          SKILL_REJECTED,
          /MCP server "hostile"/,
          /pdf-processing/,
          word,
        )
        assert.deepEqual(await asked(source, "reads"), [hostile.SKILL_URI])
      })
    }

    test("changed-file: readFile rejects a supporting file whose digest differs", T, async (t) => {
      const source = await open(t, { hostile: hostileServer("changed-file", era) })
      const skill = await source.loadSkill("hostile", "pdf-processing")
      await rejectsWith(skill.readFile("references/FORMS.md"), SKILL_REJECTED, /MCP server "hostile"/, /digest/)
      assert.deepEqual(await asked(source, "reads"), [hostile.SKILL_URI, hostile.FORMS_URI])
    })

    // The limits are the entry's: a skill past them is refused before anything is read.
    for (const [mode, word] of [
      ["too-many", /51[23]/],
      ["too-big", /MiB|bytes/],
    ] as const) {
      test(`${mode}: loadSkill rejects before any read`, T, async (t) => {
        const source = await open(t, { hostile: hostileServer(mode, era) })
        assert.equal((await source.listSkills("hostile")).length, 1, "the listing itself is valid")
        await rejectsWith(
          source.loadSkill("hostile", "pdf-processing"),
          SKILL_REJECTED,
          /MCP server "hostile"/,
          /pdf-processing/,
          word,
        )
        assert.deepEqual(await asked(source, "reads"), [])
      })
    }

    for (const mode of ["invalid-entry", "not-skill-md", "outside-file", "bad-digest", "dup-uris"]) {
      test(`${mode}: listSkills rejects naming the server and the skill`, T, async (t) => {
        const source = await open(t, { hostile: hostileServer(mode, era) })
        await rejectsWith(
          source.listSkills("hostile"),
          SKILL_REJECTED,
          /MCP server "hostile"/,
          /pdf-(processing|tools)/,
        )
        assert.deepEqual(await asked(source, "reads"), [])
      })
    }

    test("dup-names: loading by the shared name asks for the URI; the URI loads", T, async (t) => {
      const source = await open(t, { hostile: hostileServer("dup-names", era) })
      const listed = byUri(await source.listSkills("hostile"))
      assert.deepEqual(
        listed.map((s) => [s.name, s.uri]),
        [
          ["pdf-processing", hostile.DUP_URI],
          ["pdf-processing", hostile.SKILL_URI],
        ],
      )
      await rejectsWith(source.loadSkill("hostile", "pdf-processing"), "TOOLNEXUS_INVALID_ARGUMENT", /URI/i)
      assert.deepEqual(await asked(source, "reads"), [])
      const skill = await source.loadSkill("hostile", hostile.DUP_URI)
      assert.equal(skill.uri, hostile.DUP_URI)
      assert.deepEqual(await asked(source, "reads"), [hostile.DUP_URI])
    })

    test('dynamic: resources "dynamic" lists as such and loads unverified', T, async (t) => {
      const source = await open(t, { hostile: hostileServer("dynamic", era) })
      const [entry] = await source.listSkills("hostile")
      assert.equal(entry.resources, "dynamic")
      assert.deepEqual(await asked(source, "reads"), [])
      const skill = await source.loadSkill("hostile", "pdf-processing")
      assert.equal(skill.verified, false)
      assert.deepEqual(skill.frontmatter, hostile.FRONTMATTER)
      assertBody(skill.body, hostile.SKILL_MD, hostile.BODY)
      assert.deepEqual(await asked(source, "reads"), [hostile.SKILL_URI])
    })
  })
}

describe("skills of store views", () => {
  test("the store view and an agent's view list and load skills", T, async (t) => {
    const store = createMcpStore({ skills: sdkServer("2026-07-28") })
    t.after(() => store.close())
    store.forAgent("a1").addServers({ mine: hostileServer("clean", "2025-11-25") })
    // Bounded wait; a loaded machine may take longer to start the servers.
    const up = () => Object.values(store.status()).every((s) => s.state === "connected")
    assert.ok(await poll(up, 20_000), JSON.stringify(store.status()))

    const skills = byUri(await store.listSkills("skills"))
    assert.deepEqual(
      skills.map((s) => [s.server, s.name]),
      [
        ["skills", "refunds"],
        ["skills", "pdf-processing"],
      ],
    )
    const pdf = await store.loadSkill("skills", "pdf-processing")
    assert.deepEqual(pdf.frontmatter, PDF_FRONTMATTER)
    assert.equal((await pdf.readFile("references/FORMS.md")).text, FORMS_MD)

    const agent = store.forAgent("a1")
    const mine = await agent.listSkills()
    assert.deepEqual(
      mine.map((s) => [s.server, s.name, s.uri]),
      [["mine", "pdf-processing", hostile.SKILL_URI]],
    )
    const loaded = await agent.loadSkill("mine", "pdf-processing")
    assert.equal(loaded.server, "mine")
    assertBody(loaded.body, hostile.SKILL_MD, hostile.BODY)
    assert.equal((await loaded.readFile("references/FORMS.md")).text, hostile.FORMS_MD)
    await assert.rejects(agent.loadSkill("skills", "refunds"), /"skills"/)
  })
})
