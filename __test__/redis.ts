// Real redis-server processes for the tests of stores that share state through Redis: each
// on 127.0.0.1 at an ephemeral port, in a temp folder, persisting nothing, and always
// reaped. `command` speaks RESP2 over node:net itself, so the tests need no Redis client
// and see exactly what the stores wrote. The binary: PATH, /usr/bin, /usr/local/bin, then
// where scripts/ensure-redis.sh puts PyPI's (run that script when none is found), unless
// REDIS_SERVER names one (to try another version).
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import fs from "node:fs"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import type { TestContext } from "node:test"

export interface RedisOptions {
  /** `requirepass`: the default user needs this password (the url carries it). */
  password?: string
  /** An ACL user with every right; the default user is then switched off unless `password`. */
  aclUser?: { name: string; password: string }
}

export interface Redis {
  /** redis://127.0.0.1:PORT, with the credentials when the server asks for some. */
  readonly url: string
  readonly port: number
  /** The pid of the running server (a new one after `restart`). */
  readonly pid: number
  /** SIGTERM, then SIGKILL after 3 s; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>
  /** Stops the server and starts an empty one on the same port (nothing is saved). */
  restart(): Promise<void>
  /** One command, authenticated as the url says; an error reply rejects with `RedisError`. */
  command(...args: string[]): Promise<unknown>
  /** Every key matching `pattern` (default `*`), sorted, through SCAN. */
  keys(pattern?: string): Promise<string[]>
  /** Every string key with its value (other types are left out), sorted by key. */
  dump(): Promise<Map<string, string>>
}

/** An error reply (`-ERR ...`): at the top level it rejects, inside an array it is a value. */
export class RedisError extends Error {
  override name = "RedisError"
}

/** The PyPI fallback's link (see scripts/ensure-redis.sh; $HOME, as the tests move XDG_CACHE_HOME). */
export const PYPI_REDIS = path.join(os.homedir(), ".cache", "toolnexus-redis", "bin", "redis-server")

/** The redis-server to run, or undefined when there is none. `REDIS_SERVER=file` picks one. */
export function redisServerPath(): string | undefined {
  if (process.env.REDIS_SERVER) return process.env.REDIS_SERVER
  const onPath = (process.env.PATH ?? "").split(path.delimiter).filter(Boolean)
  const candidates = [...onPath, "/usr/bin", "/usr/local/bin"].map((dir) => path.join(dir, "redis-server"))
  return [...candidates, PYPI_REDIS].find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK)
      return fs.statSync(file).isFile()
    } catch {
      return false
    }
  })
}

// ---------------------------------------------------------------- RESP2

/** `*N $len arg ...`: the form every command is sent in. */
export function encode(args: string[]): Buffer {
  const parts = [`*${args.length}\r\n`]
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`)
  return Buffer.from(parts.join(""))
}

/** One reply starting at `at`: its value and where the next begins, or undefined if incomplete. */
export function parse(buf: Buffer, at = 0): { value: unknown; next: number } | undefined {
  const eol = buf.indexOf("\r\n", at)
  if (eol < 0) return undefined
  const line = buf.toString("utf8", at + 1, eol)
  const next = eol + 2
  switch (String.fromCharCode(buf[at]!)) {
    case "+":
      return { value: line, next }
    case "-":
      return { value: new RedisError(line), next }
    case ":":
      return { value: Number(line), next }
    case "$": {
      const len = Number(line)
      if (len < 0) return { value: null, next }
      if (buf.length < next + len + 2) return undefined
      return { value: buf.toString("utf8", next, next + len), next: next + len + 2 }
    }
    case "*": {
      const len = Number(line)
      if (len < 0) return { value: null, next }
      const items: unknown[] = []
      let cursor = next
      for (let i = 0; i < len; i++) {
        const item = parse(buf, cursor)
        if (!item) return undefined
        items.push(item.value)
        cursor = item.next
      }
      return { value: items, next: cursor }
    }
    default:
      throw new Error(`not a RESP2 reply: ${JSON.stringify(buf.toString("utf8", at, Math.min(buf.length, at + 40)))}`)
  }
}

/**
 * Sends `commands` on one connection to the server at `url` (AUTH first when the url has
 * credentials) and resolves with one reply per command, error replies as `RedisError` values.
 */
export function exchange(url: string, commands: string[][], timeoutMs = 5_000): Promise<unknown[]> {
  const { hostname, port, username, password } = new URL(url)
  const auth = password
    ? [
        username
          ? ["AUTH", decodeURIComponent(username), decodeURIComponent(password)]
          : ["AUTH", decodeURIComponent(password)],
      ]
    : []
  const all = [...auth, ...commands]
  if (commands.length === 0) return Promise.resolve([])
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) })
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`redis at ${hostname}:${port}: no reply in ${timeoutMs} ms`)),
    )
    let buf = Buffer.alloc(0)
    const replies: unknown[] = []
    socket.on("error", reject)
    socket.on("close", () => reject(new Error(`redis at ${hostname}:${port} closed the connection`)))
    socket.on("connect", () => socket.write(Buffer.concat(all.map(encode))))
    socket.on("data", (chunk) => {
      buf = Buffer.concat([buf, chunk])
      for (let reply = parse(buf); reply; reply = parse(buf)) {
        replies.push(reply.value)
        buf = buf.subarray(reply.next)
      }
      if (replies.length < all.length) return
      socket.destroy()
      const failedAuth = auth.length ? replies[0] : undefined
      if (failedAuth instanceof RedisError) reject(failedAuth)
      else resolve(replies.slice(auth.length))
    })
  })
}

/** One command to the server at `url`; an error reply rejects. */
export async function sendCommand(url: string, ...args: string[]): Promise<unknown> {
  const [reply] = await exchange(url, [args])
  if (reply instanceof RedisError) throw reply
  return reply
}

// ---------------------------------------------------------------- servers

/** Servers still running, SIGKILLed as the test file's process exits. */
const running = new Set<ChildProcess>()
/** Their temp folders, removed then too. */
const folders = new Set<string>()
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL")
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true })
})

/** A port that was free a moment ago (the kernel's pick for port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** "7.0.15" from `redis-server --version`, once per binary. */
const versions = new Map<string, number[]>()
function versionOf(bin: string): number[] {
  if (!versions.has(bin)) {
    const out = execFileSync(bin, ["--version"], { encoding: "utf8" })
    versions.set(bin, (/v=(\d+)\.(\d+)/.exec(out) ?? [0, 0, 0]).slice(1).map(Number))
  }
  return versions.get(bin)!
}

/** The command line: an ACL user gets every key, command and (6.2+) pub/sub channel. */
function argsFor(bin: string, port: number, dir: string, opts: RedisOptions): string[] {
  const args = ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no"]
  args.push("--dir", dir, "--daemonize", "no")
  if (opts.password) args.push("--requirepass", opts.password)
  if (opts.aclUser) {
    const [major, minor] = versionOf(bin)
    const channels = major! > 6 || (major === 6 && minor! >= 2) ? ["&*"] : []
    args.push("--user", opts.aclUser.name, "on", `>${opts.aclUser.password}`, "~*", ...channels, "+@all")
    if (!opts.password) args.push("--user", "default", "off")
  }
  return args
}

/** The url that authenticates as the options say. */
function urlFor(port: number, opts: RedisOptions): string {
  const enc = encodeURIComponent
  const auth = opts.aclUser
    ? `${enc(opts.aclUser.name)}:${enc(opts.aclUser.password)}@`
    : opts.password
      ? `:${enc(opts.password)}@`
      : ""
  return `redis://${auth}127.0.0.1:${port}`
}

/** Polls `check` every 20 ms until it holds or `ms` pass. */
async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; !(await check()) && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Whether `port` on 127.0.0.1 can be listened on now. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.on("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })
}

/**
 * Spawns redis-server on `port` and waits up to 10 s for it to say it is ready to accept
 * connections. Says what redis printed when it exits or never gets ready; `bindFailed`
 * tells the caller another port may do.
 */
async function spawnReady(
  bin: string,
  port: number,
  dir: string,
  opts: RedisOptions,
): Promise<{ child: ChildProcess } | { error: Error; bindFailed: boolean }> {
  const child = spawn(bin, argsFor(bin, port, dir, opts), { cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
  running.add(child)
  // A server must never keep the test process alive: at its exit, the handler above kills it.
  child.unref()
  ;(child.stdout as net.Socket).unref()
  ;(child.stderr as net.Socket).unref()
  let output = ""
  let exited = false
  let settle!: (ready: boolean) => void
  const ready = new Promise<boolean>((resolve) => (settle = resolve))
  const keep = (d: string) => {
    output = (output + d).slice(-4_000)
    if (/ready to accept connections/i.test(output)) settle(true)
  }
  child.stdout!.setEncoding("utf8").on("data", keep)
  child.stderr!.setEncoding("utf8").on("data", keep)
  child.on("exit", () => {
    exited = true
    running.delete(child)
    settle(false)
  })
  child.on("error", (e) => {
    // It never ran (ENOENT, EACCES): no "exit" comes.
    exited = true
    running.delete(child)
    keep(`\n${e.message}`)
    settle(false)
  })
  // Bounds the wait, and keeps this process up meanwhile: the child and its pipes are unref'd.
  const timer = setTimeout(() => settle(false), 10_000)
  const isReady = await ready
  clearTimeout(timer)
  if (isReady) return { child }
  await stopChild(child)
  const bindFailed = /address already in use|could not create server tcp/i.test(output)
  const why = exited ? `exited (${child.exitCode ?? child.signalCode})` : "did not get ready in 10 s"
  return { error: new Error(`redis-server on port ${port} ${why}; it printed:\n${output}`), bindFailed }
}

/** SIGTERM, SIGKILL after 3 s; resolves once the process has exited (and been reaped). */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  child.kill("SIGTERM")
  const timer = setTimeout(() => child.kill("SIGKILL"), 3_000)
  await exited
  clearTimeout(timer)
}

/**
 * Starts a redis-server on 127.0.0.1 at a free ephemeral port, in a temp folder, saving
 * nothing. With `t`, it is stopped when the test ends; in any case when the process exits.
 */
export async function startRedis(t?: TestContext, opts: RedisOptions = {}): Promise<Redis> {
  const bin = redisServerPath()
  if (!bin)
    throw new Error("no redis-server on PATH, in /usr/bin, /usr/local/bin or ~/.cache: run scripts/ensure-redis.sh")
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-redis-")))
  folders.add(dir)
  const start = async (fixed?: number) => {
    // Another process may take the port between our probe and redis' bind: a few tries.
    // On a restart the port is fixed: it was just freed, so tries only wait out a straggler.
    let last: Error | undefined
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = fixed ?? (await freePort())
      const started = await spawnReady(bin, port, dir, opts)
      if ("child" in started) return { child: started.child, port }
      last = started.error
      if (!started.bindFailed) break
      if (fixed) await until(() => isFree(fixed), 5_000)
    }
    throw last
  }
  let { child, port } = await start().catch((e: Error) => {
    folders.delete(dir)
    fs.rmSync(dir, { recursive: true, force: true })
    throw e
  })
  const url = urlFor(port, opts)
  let stopped = false
  const command = async (...args: string[]) => sendCommand(url, ...args)
  const keys = async (pattern = "*") => {
    const found = new Set<string>()
    let cursor = "0"
    do {
      const [next, batch] = (await command("SCAN", cursor, "MATCH", pattern, "COUNT", "1000")) as [string, string[]]
      for (const key of batch) found.add(key)
      cursor = next
    } while (cursor !== "0")
    return [...found].sort()
  }
  const redis: Redis = {
    url,
    port,
    get pid() {
      return child.pid!
    },
    async stop() {
      stopped = true
      await stopChild(child)
      folders.delete(dir)
      fs.rmSync(dir, { recursive: true, force: true })
    },
    async restart() {
      if (stopped) throw new Error("restart after stop")
      await stopChild(child)
      ;({ child } = await start(port))
    },
    command,
    keys,
    async dump() {
      const all = await keys()
      const types = await exchange(
        url,
        all.map((key) => ["TYPE", key]),
      )
      const strings = all.filter((_, i) => types[i] === "string")
      const values = await exchange(
        url,
        strings.map((key) => ["GET", key]),
      )
      // A key may expire or go between TYPE and GET: then GET says null and it is left out.
      return new Map(strings.flatMap((key, i) => (typeof values[i] === "string" ? [[key, values[i]]] : [])))
    },
  }
  t?.after(() => redis.stop())
  return redis
}
