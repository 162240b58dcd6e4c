/**
 * The docs work as written: every TypeScript block under docs/ type-checks against the packages,
 * docs/getting-started.md runs, step by step, from `./run dev` to a verified callback, and the
 * README's quick start (the block marked `<!-- test: quick-start -->`) runs as one bash script, with
 * job control as in an interactive shell, from `./run start` to `kill %1 %2`. The Python check of
 * docs/guides/callbacks.md runs with python3: False, never an exception, for a missing or malformed
 * header, and the rotation's use of it (the comment under it) accepts both secrets.
 *
 * Getting started is annotated with HTML comments the reader does not see:
 * `<!-- test: skip -->` (the next block is not run), `<!-- test: background name=N ready="T" -->`
 * (the next block keeps running; the test waits for T in its output and takes the `export X=Y`
 * lines it prints), `<!-- test: await N "T" -->` (wait for T in N's output). Other `sh` blocks run
 * in order in one shell state. Ports 8080 and 3000 are replaced with free ones.
 */
import { afterAll, describe, expect, it } from "vitest"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createHmac } from "node:crypto"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, relative, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const docs = join(root, "docs")

const markdownFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? markdownFiles(join(dir, entry.name)) : entry.name.endsWith(".md") ? [join(dir, entry.name)] : [])

interface Block {
  readonly language: string
  readonly code: string
  /** The `<!-- test: … -->` annotation right before it, if any. */
  readonly annotation: string | null
}

/** Fenced blocks and standalone annotations of a Markdown text, in order. */
const parse = (text: string): Array<Block | { readonly await: string; readonly text: string }> => {
  const items: Array<Block | { readonly await: string; readonly text: string }> = []
  const pattern = /<!-- test: (.*?) -->\s*(?:```(\w+)\n([\s\S]*?)```)?|```(\w+)\n([\s\S]*?)```/g
  for (const match of text.matchAll(pattern)) {
    if (match[1] !== undefined && match[2] === undefined) {
      const awaited = /^await (\w+) "(.*)"$/.exec(match[1])
      if (awaited !== null) items.push({ await: awaited[1]!, text: awaited[2]! })
      continue
    }
    items.push(match[1] !== undefined
      ? { language: match[2]!, code: match[3]!, annotation: match[1] }
      : { language: match[4]!, code: match[5]!, annotation: null })
  }
  return items
}

const freePort = () =>
  new Promise<number>((ok, fail) => {
    const server = createServer()
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => ok(port))
    })
  })

const started: Array<ChildProcess> = []
const cleanup: Array<string> = []

afterAll(async () => {
  for (const child of started) {
    if (child.exitCode !== null || child.pid === undefined) continue
    const exited = new Promise((ok) => child.once("exit", ok))
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, name)
      } catch {
        // The group is gone already.
      }
    }
    signal("SIGTERM")
    await Promise.race([exited, new Promise((ok) => setTimeout(ok, 15_000))])
    if (child.exitCode === null) signal("SIGKILL")
  }
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
}, 60_000)

describe("Docs", () => {
  it("type-checks every TypeScript block under docs/ and in the packages' READMEs", () => {
    const dir = join(root, "examples", ".docs-check")
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    cleanup.push(dir)
    const files: Array<string> = []
    const readmes = readdirSync(join(root, "packages")).map((name) => join(root, "packages", name, "README.md")).filter((file) => existsSync(file))
    for (const file of [...markdownFiles(docs), ...readmes]) {
      parse(readFileSync(file, "utf8")).forEach((block, n) => {
        if (!("language" in block) || block.language !== "ts") return
        const name = `${relative(root, file).replace(/[/.]/g, "_")}_${n}.ts`
        // A module of its own (top-level await), resolved from the examples package.
        writeFileSync(join(dir, name), `${block.code}\nexport {}\n`)
        files.push(name)
      })
    }
    expect(files.length).toBeGreaterThanOrEqual(6)
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
      extends: "../../tsconfig.base.json",
      compilerOptions: { noEmit: true, types: ["node"], noUnusedLocals: false },
      include: ["*.ts"]
    }))
    const result = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(dir, "tsconfig.json")], { encoding: "utf8" })
    expect(result.stdout + result.stderr).toBe("")
    expect(result.status).toBe(0)
  }, 120_000)

  it("the Python check of guides/callbacks.md returns False for missing or malformed headers and, as its comment says, accepts a rotation's pair", () => {
    const blocks = parse(readFileSync(join(docs, "guides", "callbacks.md"), "utf8")).filter((b): b is Block => "language" in b && b.language === "python")
    expect(blocks).toHaveLength(1)
    const body = JSON.stringify({ event_type: "payment.paid", payment_id: "pay_1", status: "paid" })
    const now = String(Math.floor(Date.now() / 1000))
    const sign = (key: string, timestamp = now, text = body) => createHmac("sha256", key).update(`${timestamp}.${text}`).digest("hex")
    const [secret, previous, next] = ["sk_sign_secret", "sk_sign_previous", "sk_sign_next"]
    const old = String(Number(now) - 301)
    // [name, X-Timestamp, X-Signature (null: absent), secret, body, expected]
    const cases: Array<[string, string | null, string | null, string, string, boolean]> = [
      ["signed", now, sign(secret), secret, body, true],
      ["signed, uppercase hex", now, sign(secret).toUpperCase(), secret, body, true],
      ["no X-Timestamp", null, sign(secret), secret, body, false],
      ["no X-Signature", now, null, secret, body, false],
      ["neither", null, null, secret, body, false],
      ["X-Timestamp 12abc", "12abc", sign(secret), secret, body, false],
      ["X-Timestamp superscript two", "\u00b2", sign(secret), secret, body, false],
      ["X-Timestamp of 5000 digits", "1".repeat(5000), sign(secret), secret, body, false],
      ["X-Timestamp empty", "", sign(secret), secret, body, false],
      ["X-Signature not ASCII", now, "\u00ff".repeat(64), secret, body, false],
      ["X-Signature not hex", now, "zz", secret, body, false],
      ["old timestamp", old, sign(secret, old), secret, body, false],
      ["wrong secret", now, sign(secret), "another", body, false],
      ["changed body", now, sign(secret), secret, body.replace("pay_1", "pay_2"), false]
    ]
    // The rotation's use (the comment under the function), during the overlap and after retire-previous.
    const rotations: Array<[string, string | null, string | null, boolean]> = [
      ["overlap", sign(previous), sign(next), true],
      ["overlap, X-Signature-Next absent", sign(previous), null, true],
      ["retired", sign(next), null, true],
      ["another secret's", sign("another"), sign("other"), false],
      ["no signatures", null, null, false]
    ]
    const driver = `
import json, sys
data = json.load(sys.stdin)
scope = {}
exec(data["snippet"], scope)
rotated = [line[2:] for line in data["snippet"].splitlines() if line.startswith("# any(")]

def outcome(run):
    try:
        result = run()
    except Exception as error:
        return type(error).__name__ + ": " + str(error)[:80]
    return result if type(result) is bool else "not a bool: " + repr(result)

results = [[name, outcome(lambda: scope["verify"](body.encode(), timestamp, signature, secret))]
           for name, timestamp, signature, secret, body, _ in data["cases"]]
for name, signature, signature_next, _ in data["rotations"]:
    names = dict(scope, raw_body=data["body"].encode(), timestamp=data["now"], signature=signature, signature_next=signature_next,
                 previous=data["previous"], new=data["next"])
    results.append([name, outcome(lambda: eval(rotated[0], names)) if len(rotated) == 1 else "no one rotation comment"])
print(json.dumps(results))
`
    const input = JSON.stringify({ snippet: blocks[0]!.code, cases, rotations, body, now, previous, next })
    const result = spawnSync("python3", ["-c", driver], { input, encoding: "utf8", timeout: 60_000 })
    expect(result.status, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual([...cases.map((c) => [c[0], c[5]]), ...rotations.map((r) => [r[0], r[3]])])
  })

  it("runs getting-started.md from ./run dev to a verified callback", async () => {
    const serverPort = await freePort()
    const receiverPort = await freePort()
    const dataDir = mkdtempSync(join(tmpdir(), "paydesk-docs-"))
    chmodSync(dataDir, 0o755)
    cleanup.push(dataDir)
    const state = join(dataDir, "shell-state.sh")
    writeFileSync(state, "")
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(serverPort),
      HOST: "127.0.0.1",
      PAYDESK_URL: `http://127.0.0.1:${serverPort}`,
      PAYDESK_DATA_DIR: dataDir,
      LOG_LEVEL: "warn"
    }
    delete env.DATABASE_URL
    delete env.PAYDESK_ADMIN_TOKEN
    const localize = (code: string) =>
      code.replaceAll("127.0.0.1:8080", `127.0.0.1:${serverPort}`).replaceAll("3000", String(receiverPort))
    const outputs = new Map<string, { text: string }>()
    const waitFor = async (name: string, text: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs
      while (!outputs.get(name)!.text.includes(text)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for "${text}" from ${name}:\n${outputs.get(name)!.text}`)
        await new Promise((ok) => setTimeout(ok, 200))
      }
    }

    const steps = parse(readFileSync(join(docs, "getting-started.md"), "utf8"))
    let ran = 0
    for (const step of steps) {
      if ("await" in step) {
        await waitFor(step.await, step.text, 60_000)
        continue
      }
      if (step.language !== "sh" || step.annotation === "skip") continue
      const code = localize(step.code)
      const background = /^background name=(\w+) ready="(.*)"$/.exec(step.annotation ?? "")
      if (background !== null) {
        const [, name, ready] = background
        const output = { text: "" }
        outputs.set(name!, output)
        const child = spawn("bash", ["-c", `source "${state}"\n${code}`], { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] })
        started.push(child)
        child.stdout!.on("data", (c: Buffer) => (output.text += c.toString()))
        child.stderr!.on("data", (c: Buffer) => (output.text += c.toString()))
        await waitFor(name!, ready!, 180_000)
        // What it tells the reader to run (`export PAYDESK_ADMIN_TOKEN=…`) goes into the shell state.
        const exports = [...output.text.matchAll(/^\s*(export [A-Z_]+=\S+)\s*$/gm)].map((m) => m[1]).join("\n")
        writeFileSync(state, `${readFileSync(state, "utf8")}\n${exports}\n`)
      } else {
        const result = spawnSync("bash", ["-c", `set -euo pipefail\nsource "${state}"\n${code}\nexport -p > "${state}"`], { cwd: root, env, encoding: "utf8", timeout: 120_000 })
        expect(result.status, `${code}\n${result.stdout}\n${result.stderr}`).toBe(0)
      }
      ran++
    }
    // ./run dev, the operator token, the merchant, the receiver, the listener, the trigger.
    expect(ran).toBe(6)
    const received = outputs.get("receiver")!.text
    expect(received).toMatch(/verified payment\.created pay_[0-9a-f-]{36}/)
    expect(received).toMatch(/verified payment\.paid pay_[0-9a-f-]{36}/)
  }, 300_000)

  it("runs the README's quick start as written, from ./run start to a verified callback and kill %1 %2", async () => {
    const blocks = parse(readFileSync(join(root, "README.md"), "utf8")).filter((b): b is Block => "language" in b && b.annotation === "quick-start")
    expect(blocks).toHaveLength(1)
    const serverPort = await freePort()
    const receiverPort = await freePort()
    // Its files (server.log, terminal.json, …) go to a directory of its own; `./run` is the checkout's.
    const work = mkdtempSync(join(tmpdir(), "paydesk-readme-"))
    chmodSync(work, 0o755)
    cleanup.push(work)
    const env: NodeJS.ProcessEnv = { ...process.env, PAYDESK_DATA_DIR: join(work, ".data") }
    for (const name of ["DATABASE_URL", "PAYDESK_ADMIN_TOKEN", "PAYDESK_URL", "PAYDESK_SIGNING_SECRET", "PORT", "HOST", "LOG_LEVEL"]) delete env[name]
    // A reader who exported PORT for the server (an outside probe's receiver died on it, and the quick
    // start waited for ever): the receiver's own port is the README's to give.
    env.PORT = String(serverPort)
    // The ports it names become free ones (the server and the receiver read PORT); nothing else changes.
    const code = blocks[0]!.code
      .replaceAll("127.0.0.1:8080", `127.0.0.1:${serverPort}`)
      .replaceAll("127.0.0.1:4000", `127.0.0.1:${receiverPort}`)
      .replace(/^(.*)\.\/run start/m, `$1PORT=${serverPort} ./run start`)
      .replace(/^PORT=4000 \.\/run (pnpm .* run receiver)/m, `PORT=${receiverPort} ./run $1`)
      .replaceAll("./run ", `${JSON.stringify(join(root, "run"))} `)
    expect(code).toContain("kill %1 %2")
    // Job control as in an interactive shell; the jobs are stopped when the script is.
    const script = `set -m\ntrap 'for p in $(jobs -p); do kill -TERM -- -$p 2>/dev/null; done' EXIT\ntrap 'exit 143' TERM\n${code}`
    const child = spawn("bash", ["-c", script], { cwd: work, env, detached: true, stdio: ["ignore", "pipe", "pipe"] })
    started.push(child)
    let output = ""
    child.stdout!.on("data", (c: Buffer) => (output += c.toString()))
    child.stderr!.on("data", (c: Buffer) => (output += c.toString()))
    const exitCode = await new Promise<number | null>((ok) => {
      const timer = setTimeout(() => process.kill(-child.pid!, "SIGTERM"), 420_000)
      child.once("exit", (exit) => (clearTimeout(timer), ok(exit)))
    })
    const read = (name: string) => existsSync(join(work, name)) ? readFileSync(join(work, name), "utf8") : ""
    const report = `${output}\n--- server.log\n${read("server.log").slice(-4000)}\n--- receiver.log\n${read("receiver.log")}`
    expect(exitCode, report).toBe(0)
    expect(output, report).toMatch(/verified payment\.created pay_[0-9a-f-]{36} status=created/)
    expect(output, report).toMatch(/verified payment\.paid pay_[0-9a-f-]{36} status=paid/)
    // The operator's tables: the sandbox payment, paid, and its delivered callbacks.
    const lines = output.split("\n")
    expect(lines.some((line) => line.includes("ord-1") && / paid /.test(line)), report).toBe(true)
    expect(lines.filter((line) => / delivered +1 +200 /.test(line)).length, report).toBeGreaterThanOrEqual(2)
    // kill %1 %2 stopped both, the server cleanly.
    expect(read("server.log").trim().split("\n").at(-1), report).toContain("paydesk stopped")
    const answers = async (port: number) => fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)
    expect(await answers(serverPort)).toBe(false)
    expect(await answers(receiverPort)).toBe(false)
  }, 480_000)
})
