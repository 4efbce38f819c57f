// The pieces of the install test: running commands with their output in the failure,
// staging a release checkout, an environment without Rust, and what an install weighs.
import { execFile, execFileSync, spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"

export interface Ran {
  code: number | null
  stdout: string
  /** stdout and stderr, for failure messages. */
  output: string
}

/** Runs a command to its end; unless `check` is false, a non-zero exit fails the test with its output. */
export function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; check?: boolean }): Ran {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env,
    encoding: "utf8",
    timeout: 300_000,
    maxBuffer: 64 << 20,
  })
  const output = `$ ${cmd} ${args.join(" ")}\n${r.error ?? ""}${r.stdout}${r.stderr}`
  if (opts.check !== false && r.status !== 0) throw new Error(`exit ${r.status ?? r.signal}:\n${output}`)
  return { code: r.status, stdout: r.stdout, output }
}

export interface Command {
  cmd: string
  args: string[]
  cwd: string
  env: NodeJS.ProcessEnv
}

/** Runs commands side by side; fails with the output of every one that exited non-zero. */
export async function runAll(commands: Command[]): Promise<void> {
  const failures = await Promise.all(
    commands.map(
      ({ cmd, args, cwd, env }) =>
        new Promise<string | null>((resolve) => {
          execFile(cmd, args, { cwd, env, timeout: 300_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
            resolve(err ? `$ ${cmd} ${args.join(" ")} (in ${cwd})\n${err.message}\n${stdout}${stderr}` : null),
          )
        }),
    ),
  )
  const failed = failures.filter((f) => f !== null)
  if (failed.length > 0) throw new Error(failed.join("\n"))
}

const GIT_ID = {
  GIT_AUTHOR_NAME: "release",
  GIT_AUTHOR_EMAIL: "release@localhost",
  GIT_COMMITTER_NAME: "release",
  GIT_COMMITTER_EMAIL: "release@localhost",
}

/**
 * Lays out what a release job has in `dest`: the tracked files of `root` (as they are in
 * its work tree, so nothing generated and git-ignored comes along), committed to a git
 * repository of its own (`napi prepublish` reads `git log`), each built binary where the
 * workflow downloads its artifacts (`npm run artifacts` moves them into their npm/ packages).
 */
export function stageCheckout(root: string, dest: string, binaries: Record<string, string>): string {
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean)
  for (const file of tracked) {
    if (!fs.existsSync(path.join(root, file))) continue // deleted in the work tree
    fs.mkdirSync(path.dirname(path.join(dest, file)), { recursive: true })
    fs.copyFileSync(path.join(root, file), path.join(dest, file))
  }
  fs.symlinkSync(path.join(root, "node_modules"), path.join(dest, "node_modules"))
  const env = { ...process.env, ...GIT_ID }
  for (const args of [
    ["init", "-q"],
    ["add", "-A"],
    ["commit", "-qm", "release"],
  ])
    execFileSync("git", args, { cwd: dest, env })
  for (const [triple, binary] of Object.entries(binaries)) {
    const dir = path.join(dest, "artifacts", `bindings-${triple}`)
    fs.mkdirSync(dir, { recursive: true })
    fs.copyFileSync(binary, path.join(dir, path.basename(binary)))
  }
  return dest
}

/** `env` with no directory on its PATH that holds cargo or rustc, optionally `first` in front. */
export function withoutRust(env: NodeJS.ProcessEnv, first?: string): NodeJS.ProcessEnv {
  const dirs = (env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => !["cargo", "rustc"].some((b) => fs.existsSync(path.join(dir, b))))
  return { ...env, PATH: [...(first ? [first] : []), ...dirs].join(path.delimiter) }
}

/** The packages installed in `dir` and the bytes their files take. */
export function packageSize(dir: string): { packages: string[]; bytes: number } {
  const lock = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", ".package-lock.json"), "utf8"))
  const packages = Object.keys(lock.packages).map((key) => key.replace(/^.*node_modules\//, ""))
  const size = (p: string): number => {
    const stat = fs.lstatSync(p)
    return stat.isDirectory() ? fs.readdirSync(p).reduce((sum, e) => sum + size(path.join(p, e)), 0) : stat.size
  }
  return { packages, bytes: size(path.join(dir, "node_modules")) }
}

/** The code of the "First example" section of a README. */
export function firstExample(readme: string): string {
  const text = fs.readFileSync(readme, "utf8")
  const section = text.slice(text.indexOf("\n## First example\n"))
  const code = /```js\n([\s\S]*?)```/.exec(section)
  if (!code) throw new Error(`${readme} has no First example code block`)
  return code[1]!
}

/**
 * Lays out in `app` (where toolnexus is installed) what the docs examples and the README's
 * first example expect: the package's example servers, and the `examples` (names of
 * __test__/docs files of `root`) in `docs/`, the first example as `first.mjs`.
 */
export function stageExamples(root: string, app: string, examples: string[]): void {
  fs.cpSync(path.join(app, "node_modules", "toolnexus", "examples"), path.join(app, "examples"), { recursive: true })
  fs.mkdirSync(path.join(app, "js"))
  fs.mkdirSync(path.join(app, "docs"))
  fs.writeFileSync(path.join(app, "first.mjs"), firstExample(path.join(app, "node_modules", "toolnexus", "README.md")))
  for (const name of examples)
    fs.copyFileSync(path.join(root, "__test__", "docs", `${name}.ts`), path.join(app, "docs", `${name}.ts`))
}
