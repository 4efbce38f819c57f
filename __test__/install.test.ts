// `npm install toolnexus` as a user does it, on a machine with no Rust: this checkout is
// published with its real release scripts to a loopback verdaccio, then installed into
// an empty folder with no cargo on the PATH, where the README's first example, the docs
// examples, the CLI and a TypeScript consumer run against it. Needs the addon that
// `npm run build` made.
import assert from "node:assert/strict"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { after, before, describe, it } from "node:test"
import { fileURLToPath } from "node:url"

import { type Registry, startRegistry } from "./install/registry.js"
import { packageSize, run, runAll, stageCheckout, stageExamples, withoutRust } from "./install/steps.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const PLATFORM_PACKAGES = { x64: "linux-x64-gnu", arm64: "linux-arm64-gnu" }
const TRIPLES = { x64: "x86_64-unknown-linux-gnu", arm64: "aarch64-unknown-linux-gnu" }
const arch = process.arch as keyof typeof TRIPLES
/** The addon `npm run build` made on this machine. */
const BUILT = {
  triple: TRIPLES[arch],
  npmDir: PLATFORM_PACKAGES[arch],
  file: `toolnexus.${PLATFORM_PACKAGES[arch]}.node`,
}
/** The other listed target, whose binary this machine did not build. */
const MISSING =
  arch === "x64"
    ? { triple: TRIPLES.arm64, npmDir: PLATFORM_PACKAGES.arm64 }
    : { triple: TRIPLES.x64, npmDir: PLATFORM_PACKAGES.x64 }
const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version as string
const examples = ["loadMcp-1", "loadMcp-2", "loadMcp-3", "listMcpTools-1", "listMcpTools-2", "listMcpTools-3"]
const typescripts = { "5.9": "5.9.3", "6": "6.0.3", "7": "7.0.2" }
const resolutions = { node16: "node16", nodenext: "nodenext", bundler: "esnext" }
const NODES = ["20", "22"]
const current = process.versions.node.split(".")[0]!

describe(
  "npm install toolnexus from a registry",
  { skip: process.platform !== "linux" || !(arch in TRIPLES), timeout: 900_000 },
  () => {
    let tmp: string
    let registry: Registry
    let src: string
    let app: string
    let tools: string

    before(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-install-"))
      registry = await startRegistry(path.join(tmp, "registry"))
      // What a release job has: a clean checkout plus the built binary as an artifact.
      src = stageCheckout(root, path.join(tmp, "src"), { [BUILT.triple]: path.join(root, BUILT.file) })
      app = path.join(tmp, "app")
      tools = path.join(tmp, "tools")
      for (const dir of [app, tools]) {
        fs.mkdirSync(dir)
        fs.writeFileSync(
          path.join(dir, "package.json"),
          JSON.stringify({ name: path.basename(dir), private: true, type: "module" }),
        )
      }
      // Called by path, so aliases side by side do not fight over one `tsc` or `node` bin.
      const specs = Object.entries(typescripts).map(([major, v]) => `ts${major}@npm:typescript@${v}`)
      const nodes = NODES.filter((major) => major !== current).map(
        (major) => `node${major}@npm:node-linux-${arch}@${major}`,
      )
      run("npm", ["install", ...specs, ...nodes], { cwd: tools, env: registry.env })
    })

    after(async () => {
      await registry?.stop()
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
    })

    it("ships the loader the build generates: binding.js is committed as built", () => {
      // A release publishes from a clean checkout: an uncommitted loader would not be in it.
      const diff = run("git", ["diff", "--stat", "HEAD", "--", "binding.js"], { cwd: root, env: process.env }).stdout
      assert.equal(diff, "", `binding.js differs from the committed one; commit it:\n${diff}`)
    })

    it("refuses to publish while a configured target's binary is missing, and publishes nothing", () => {
      const artifacts = run("npm", ["run", "artifacts"], { cwd: src, env: registry.env, check: false })
      assert.notEqual(artifacts.code, 0, `artifacts accepted a missing binary:\n${artifacts.output}`)
      assert.ok(artifacts.output.includes(MISSING.triple), "the failure names the missing target")
      // Even with every binary but one in its package, publishing fails before it publishes.
      const placed = path.join(src, "npm", BUILT.npmDir, BUILT.file)
      fs.copyFileSync(path.join(root, BUILT.file), placed)
      const publish = run("npm", ["publish"], { cwd: src, env: registry.env, check: false })
      fs.rmSync(placed)
      assert.notEqual(publish.code, 0, `publish succeeded without the ${MISSING.npmDir} binary:\n${publish.output}`)
      assert.ok(publish.output.includes(MISSING.npmDir), "the failure names the missing target")
      for (const name of ["toolnexus", ...Object.values(PLATFORM_PACKAGES).map((p) => `toolnexus-${p}`)]) {
        const view = run("npm", ["view", name, "version"], { cwd: tmp, env: registry.env, check: false })
        assert.notEqual(view.code, 0, `${name} was published: ${view.output}`)
      }
    })

    it("publishes the main package and its platform package with the release scripts", () => {
      // Only the target this machine built; the release workflow builds every listed one.
      const manifest = path.join(src, "package.json")
      const pkg = JSON.parse(fs.readFileSync(manifest, "utf8"))
      pkg.napi.targets = [BUILT.triple]
      fs.writeFileSync(manifest, JSON.stringify(pkg, null, 2))
      run("npm", ["run", "artifacts"], { cwd: src, env: registry.env })
      run("npm", ["publish"], { cwd: src, env: registry.env })
      const published = JSON.parse(run("npm", ["view", "toolnexus", "--json"], { cwd: tmp, env: registry.env }).stdout)
      assert.deepEqual(published.optionalDependencies, { [`toolnexus-${BUILT.npmDir}`]: version })
    })

    it("installs as 2 packages under 19 MiB, with no Rust toolchain on the PATH", () => {
      const env = withoutRust(registry.env)
      assert.ok(!env.PATH!.split(path.delimiter).some((dir) => fs.existsSync(path.join(dir, "cargo"))))
      run("npm", ["install", "toolnexus"], { cwd: app, env })
      const { packages, bytes } = packageSize(app)
      assert.deepEqual(packages.sort(), ["toolnexus", `toolnexus-${BUILT.npmDir}`])
      assert.ok(bytes < 19 * 1024 * 1024, `installed size ${bytes} bytes`)
      console.log(`# npm install toolnexus: ${packages.length} packages, ${(bytes / 1e6).toFixed(1)} MB`)
    })

    it("passes publint --strict and attw on the published tarball", () => {
      const tarball = path.join(
        tmp,
        run("npm", ["pack", `toolnexus@${version}`, "--pack-destination", tmp], {
          cwd: tmp,
          env: registry.env,
        }).stdout.trim(),
      )
      const bin = (name: string) => path.join(root, "node_modules", ".bin", name)
      run(bin("publint"), ["run", tarball, "--strict"], { cwd: tmp, env: registry.env })
      // ESM only (the README says so): CommonJS reaches it through require(esm), which attw's
      // node16-cjs resolution does not model.
      run(bin("attw"), [tarball, "--profile", "esm-only"], { cwd: tmp, env: registry.env })
    })

    it("type-checks for a consumer without @types/node under TypeScript 5.9, 6 and 7", async () => {
      const dir = path.join(app, "typecheck")
      fs.mkdirSync(dir)
      fs.copyFileSync(path.join(root, "__test__", "install", "consumer.ts"), path.join(dir, "consumer.ts"))
      const checks = Object.entries(resolutions).flatMap(([resolution, module]) => {
        // Defaults otherwise; a target with async functions, as any current project has.
        const compilerOptions = { module, moduleResolution: resolution, target: "es2022", noEmit: true }
        fs.writeFileSync(
          path.join(dir, `tsconfig.${resolution}.json`),
          JSON.stringify({ compilerOptions, files: ["consumer.ts"] }),
        )
        return Object.keys(typescripts).map((major) => ({
          cmd: process.execPath,
          args: [path.join(tools, "node_modules", `ts${major}`, "bin", "tsc"), "-p", `tsconfig.${resolution}.json`],
          cwd: dir,
          env: registry.env,
        }))
      })
      await runAll(checks)
    })

    for (const major of NODES) {
      it(`runs the docs examples and \`npx toolnexus list\` on Node ${major}`, () => {
        if (!fs.existsSync(path.join(app, "node_modules", "@modelcontextprotocol", "sdk"))) {
          run("npm", ["install", "@modelcontextprotocol/sdk"], { cwd: app, env: withoutRust(registry.env) })
          stageExamples(root, app, examples)
        }
        const nodeDir =
          major === current ? path.dirname(process.execPath) : path.join(tools, "node_modules", `node${major}`, "bin")
        const env = withoutRust(registry.env, nodeDir)
        assert.match(run("node", ["--version"], { cwd: app, env }).stdout, new RegExp(`^v${major}\\.`))
        const tsx = import.meta.resolve("tsx")
        for (const name of examples) {
          const { stdout } = run("node", ["--import", tsx, `docs/${name}.ts`], { cwd: app, env })
          assert.ok(
            stdout.split("\n").some((line) => line.startsWith("ok:")),
            `${name}: ${stdout}`,
          )
        }
        const first = run("node", ["first.mjs"], { cwd: app, env }).stdout
        assert.match(first, /\{ demo: 'connected' \}\n\[ 'demo_echo', 'demo_add', 'demo_word_count' \]\n5\n/)
        const list = run("npx", ["toolnexus", "list", "examples/mcp.json"], { cwd: app, env })
        assert.match(list.stdout, /^demo: connected \(3 tools, protocol 2025-\d\d-\d\d, up in \d+ ms\)$/m)
        assert.match(list.stdout, /^example-remote: disabled$/m)
      })
    }
  },
)
