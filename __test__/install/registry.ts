// A throwaway npm registry for the install test: verdaccio on a loopback port, storing in
// a temp folder. `toolnexus*` packages live only here (never fetched from upstream); all
// else is proxied from the registry npm is configured with.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import fs from "node:fs"
import { createRequire } from "node:module"
import net from "node:net"
import path from "node:path"

export interface Registry {
  url: string
  /** Environment for npm: this registry, and a userconfig holding the dummy token npm 11 wants to publish. */
  env: NodeJS.ProcessEnv
  stop(): Promise<void>
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
    server.on("error", reject)
  })

function config(dir: string, upstream: string): string {
  return `storage: ${JSON.stringify(path.join(dir, "storage"))}
auth:
  htpasswd:
    file: ${JSON.stringify(path.join(dir, "htpasswd"))}
uplinks:
  upstream:
    url: ${JSON.stringify(upstream)}
packages:
  "toolnexus":
    access: $all
    publish: $all
  "toolnexus-*":
    access: $all
    publish: $all
  "**":
    access: $all
    proxy: upstream
# A platform package carries an 8 MB addon, base64 in the publish request.
max_body_size: 200mb
log: { type: stdout, format: pretty, level: warn }
`
}

async function waitUntilUp(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited (${child.exitCode}):\n${log()}`)
    try {
      if ((await fetch(`${url}/-/ping`)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`verdaccio did not answer within 30 s:\n${log()}`)
}

/** The environment less the npm_config_* that an enclosing `npm test` exports (its registry, its userconfig). */
export const withoutNpmConfig = (env: NodeJS.ProcessEnv) =>
  Object.fromEntries(Object.entries(env).filter(([k]) => !/^npm_config_/i.test(k)))

export async function startRegistry(dir: string): Promise<Registry> {
  fs.mkdirSync(dir, { recursive: true })
  const upstream = execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).trim()
  const configPath = path.join(dir, "config.yaml")
  fs.writeFileSync(configPath, config(dir, upstream))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const bin = createRequire(import.meta.url).resolve("verdaccio/bin/verdaccio")
  const child = spawn(process.execPath, [bin, "--config", configPath, "--listen", `127.0.0.1:${port}`], {
    // The uplink is reached over TLS, possibly through this machine's own CA.
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS ?? "/etc/ssl/certs/ca-certificates.crt",
    },
    stdio: ["ignore", "pipe", "pipe"],
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    await exited
  }
  try {
    await waitUntilUp(url, child, () => output)
  } catch (error) {
    await stop()
    throw error
  }
  const userconfig = path.join(dir, "npmrc")
  // npm 11 refuses to publish without a token; verdaccio takes this one as anonymous.
  fs.writeFileSync(userconfig, `registry=${url}/\n//127.0.0.1:${port}/:_authToken=dummy\n`)
  // TMPDIR: napi prepublish stages its packages in a temporary folder; keep it in ours.
  const tmp = path.join(dir, "tmp")
  fs.mkdirSync(tmp)
  const env = {
    ...withoutNpmConfig(process.env),
    NPM_CONFIG_REGISTRY: `${url}/`,
    NPM_CONFIG_USERCONFIG: userconfig,
    TMPDIR: tmp,
  }
  return { url, env, stop }
}
