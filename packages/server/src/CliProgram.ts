/**
 * The `paydesk` CLI on commander: `--help` at every level, JSON output by default and `--table` for
 * people, the server from `--url` or `PAYDESK_URL` (default http://127.0.0.1:8080) and the operator
 * token from `PAYDESK_ADMIN_TOKEN`. Exit codes: 0 done, 1 the server refused (API error) or could not
 * be reached, 2 wrong usage (unknown command, missing argument or option, no token).
 *
 * Commands come from `extensions`: each registers its commands on the program and uses the
 * `Context` for output, failures and the operator API. The operator's commands (CliCommands.ts) and
 * the merchant's (CliDev.ts: `listen`, `trigger`, `events`, `test-clocks`, with an API key) are two
 * entries in that list.
 */
import { Command, CommanderError } from "commander"
import * as CliCommands from "./CliCommands.js"
import * as CliDev from "./CliDev.js"

/** How the CLI meets the world (tests give their own). */
export interface Io {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly readStdin: () => Promise<string>
  readonly fetch: typeof globalThis.fetch
  /**
   * Asks the person at the terminal a yes/no question (default no); absent when the CLI does not run
   * in a terminal (a script, a pipe), where calls that cannot be undone are made without asking.
   */
  readonly confirm?: (question: string) => Promise<boolean>
}

/** What a command module gets besides the program. */
export interface Context {
  readonly io: Io
  /** Base URL of the server (`--url`, `PAYDESK_URL`, or http://127.0.0.1:8080), without trailing slash. */
  url(command: Command): string
  /** Prints an answer: JSON, or a table with `--table`. */
  print(command: Command, value: unknown): void
  /** Reports a failure on stderr and sets the exit code (1: API or network, 2: usage). */
  fail(message: string, exitCode: 1 | 2): void
  /** Calls the operator API and prints the answer (or fails). */
  operator(command: Command, call: CliCommands.Call): Promise<void>
}

/** A module of commands. */
export type Extension = (program: Command, context: Context) => void

/** The operator API's commands. */
export const operatorCommands: Extension = (program, context) => {
  // The action's command is the last one commander ran; `send` is called from inside that action.
  let current: Command = program
  program.hook("preAction", (_program, action) => {
    current = action
  })
  CliCommands.register(program, (call) => context.operator(current, call), context.io.readStdin)
}

/**
 * The merchant's commands (`listen`, `trigger`, `events`, `test-clocks`, `subscriptions upcoming`
 * and `charge-outcomes`; CliDev.ts): a terminal's API key, not the operator token.
 */
export const devCommands: Extension = (program, context) => CliDev.register(program, context)

/** The command modules of the CLI, in the order they appear in `paydesk --help`. */
export const extensions: ReadonlyArray<Extension> = [operatorCommands, devCommands]

/** Default address of the server. */
export const defaultUrl = "http://127.0.0.1:8080"

/** How long the CLI waits for an answer. */
export const timeoutMs = 30_000

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Characters a terminal acts on instead of showing: C0 and C1 controls (an escape sequence in a
 * merchant's description could clear the operator's screen, retitle the window or write the
 * clipboard), the bidi embeddings, overrides and isolates (which reorder what follows them) and
 * marks, and the invisible zero-width space, word joiner and byte order mark (a name that reads as
 * another: an outside probe). The zero-width (non-)joiners stay: scripts and emoji need them.
 */
const unprintable = /[\u0000-\u001f\u007f-\u009f\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g

const escaped = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`

/** `text` with every such character written as its JSON escape (`\u001b`), a table cell's line breaks too. */
const forTerminal = (text: string): string => text.replace(unprintable, escaped)

/**
 * Those escaped in whatever the CLI writes: every one but the line break and the tab its own layout
 * uses (JSON text has no other control outside its strings, which it escapes itself, so it still
 * parses to the same value).
 */
const unprintableInOutput = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g

/**
 * `io` whose writes escape them, whatever wrote the text (a table, JSON, an error, `listen`'s and
 * `events list`'s lines, commander's help); a table's cells escape their line breaks as well (one row
 * a line).
 */
const escapingOutput = (io: Io): Io => ({
  ...io,
  stdout: (text) => io.stdout(text.replace(unprintableInOutput, escaped)),
  stderr: (text) => io.stderr(text.replace(unprintableInOutput, escaped))
})

const cell = (value: unknown): string => {
  if (value === null || value === undefined) return ""
  return forTerminal(typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value))
}

const aligned = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => row.map((text, column) => column === row.length - 1 ? text : text.padEnd(widths[column]!)).join("  ").trimEnd()).join("\n")
}

/**
 * A table for people: a list (`items`, or an array) as one row per record and a column per field
 * (nested values as JSON, paging below); a single record as one line per field.
 */
export const table = (value: unknown): string => {
  const items = isRecord(value) && Array.isArray(value.items) ? value.items : Array.isArray(value) ? value : null
  if (items !== null) {
    const paging = isRecord(value) && typeof value.total === "number" ? `\n(${items.length} of ${value.total}${typeof value.page === "number" ? `, page ${value.page}` : ""})` : ""
    if (items.length === 0) return `(none)${paging}`
    if (!items.every(isRecord)) return items.map(cell).join("\n")
    const columns = [...new Set(items.flatMap((item) => Object.keys(item)))]
    return `${aligned([columns.map((c) => c.toUpperCase()), ...items.map((item) => columns.map((c) => cell(item[c])))])}${paging}`
  }
  if (isRecord(value)) return aligned(Object.entries(value).map(([key, field]) => [key, cell(field)]))
  return cell(value)
}

/** The code of a network failure (`ECONNREFUSED`, `ENOTFOUND`...) from fetch's error or its causes, else the innermost message. */
const networkCode = (error: unknown): string => {
  let message = error instanceof Error && error.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : "network error"
  for (let current: unknown = error, depth = 0; typeof current === "object" && current !== null && depth < 5; depth++) {
    if ("code" in current && typeof current.code === "string") return current.code
    if (depth > 0 && "message" in current && typeof current.message === "string" && current.message !== "") message = current.message
    current = "cause" in current ? current.cause : undefined
  }
  return message
}

/** Runs the CLI on `argv` (without node and the script); resolves with the exit code. */
export const run = async (argv: ReadonlyArray<string>, raw: Io, modules: ReadonlyArray<Extension> = extensions): Promise<number> => {
  const io = escapingOutput(raw)
  let exitCode = 0
  const program = new Command("paydesk")
    .description("Operate a Paydesk server through its operator API (PAYDESK_URL, PAYDESK_ADMIN_TOKEN); a merchant's commands (listen, trigger, events, test-clocks, subscriptions upcoming and charge-outcomes) take a terminal's API key (PAYDESK_API_KEY).")
    .option("--url <url>", `the server (default: PAYDESK_URL, else ${defaultUrl})`)
    .option("--table", "print a table instead of JSON")
    .option("-y, --yes", "make calls that cannot be undone (payouts approve and reject, payments refund and chargeback, api-keys revoke, terminals rotate-secret, subscriptions stop) without asking first in a terminal")
    .showHelpAfterError("(add --help for usage)")
    // A command's help lists --url, --table and --yes too.
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .addHelpText("after", "\nEvery group has --help, so does every command: paydesk accounts --help, paydesk accounts create --help.\nExit codes: 0 done, 1 API error or server not reachable, 2 wrong usage.")

  const fail = (message: string, code: 1 | 2) => {
    io.stderr(`paydesk: ${message}\n`)
    exitCode = Math.max(exitCode, code)
  }
  const context: Context = {
    io,
    url: (command) => {
      const given = (command.optsWithGlobals() as { url?: string }).url ?? io.env.PAYDESK_URL
      return (given === undefined || given === "" ? defaultUrl : given).replace(/\/+$/, "")
    },
    print: (command, value) => {
      const tabular = (command.optsWithGlobals() as { table?: boolean }).table === true
      io.stdout(`${tabular ? table(value) : JSON.stringify(value, null, 2)}\n`)
    },
    fail,
    operator: async (command, call) => {
      const url = context.url(command)
      if (!URL.canParse(url)) return fail(`the server URL ${JSON.stringify(url)} is not a URL (--url or PAYDESK_URL)`, 2)
      const token = io.env.PAYDESK_ADMIN_TOKEN
      if (token === undefined || token === "") return fail("PAYDESK_ADMIN_TOKEN is not set (the server prints one at start when it generates it)", 2)
      /** The answer's body when the server answered 2xx; otherwise the failure is reported and undefined returned. */
      const exchange = async (
        method: CliCommands.Call["method"],
        path: string,
        body?: Record<string, unknown>,
        idempotencyKey?: string
      ): Promise<{ readonly body: unknown } | undefined> => {
        let response: Response
        try {
          response = await io.fetch(`${url}/admin/v1${path}`, {
            method,
            headers: {
              authorization: `Bearer ${token}`,
              ...(body === undefined ? {} : { "content-type": "application/json" }),
              ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            signal: AbortSignal.timeout(timeoutMs)
          })
        } catch (error) {
          const code = networkCode(error)
          fail(`cannot reach ${url} (${code}): is the server running there? Point --url or PAYDESK_URL at it.`, 1)
          return undefined
        }
        const text = await response.text()
        let answer: unknown = text
        try {
          answer = JSON.parse(text)
        } catch {}
        if (response.ok) return { body: answer }
        const error = isRecord(answer) && isRecord(answer.error) ? answer.error : null
        if (response.status === 401) fail(`${url} refused the operator token (401): check PAYDESK_ADMIN_TOKEN`, 1)
        else {
          fail(error === null
            ? `${response.status} ${response.statusText}: ${text.slice(0, 500)}`
            : `${response.status} ${String(error.code)}: ${String(error.message)}${error.field === undefined ? "" : ` (field ${String(error.field)})`}`, 1)
        }
        return undefined
      }
      // A call that cannot be undone, in a terminal and without --yes: the object it acts on is shown
      // (read first; a failure to read it is reported as the call's would be) and the answer must be yes.
      const asked = (command.optsWithGlobals() as { yes?: boolean }).yes !== true ? call.confirm : undefined
      if (asked !== undefined && io.confirm !== undefined) {
        let shown = ""
        if (asked.show !== undefined) {
          const object = await exchange("GET", asked.show.path)
          if (object === undefined) return
          const record = isRecord(object.body) ? object.body : {}
          const fields = asked.show.fields.filter((field) => field in record)
          shown = fields.length === 0 ? "" : `${aligned(fields.map((field) => [`  ${field}`, cell(record[field])]))}\n`
        }
        if (!(await io.confirm(`${shown}${asked.question} [y/N] `))) return fail("not done: not confirmed (--yes makes it without asking)", 1)
      }
      const answer = await exchange(call.method, call.path, call.body, call.idempotencyKey)
      if (answer !== undefined) context.print(command, answer.body)
    }
  }
  for (const module of modules) module(program, context)

  try {
    await program.parseAsync([...argv], { from: "user" })
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error
    // --help and --version: done; a group without its command shows its help as a usage error.
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return exitCode
    return 2
  }
  return exitCode
}
