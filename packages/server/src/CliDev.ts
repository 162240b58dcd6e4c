/**
 * The merchant's commands of the `paydesk` CLI, on commander like the operator's (`--help` at every
 * level, the same exit codes, JSON or `--table`), with a terminal's API key (`PAYDESK_API_KEY` or
 * `--api-key`) instead of the operator token:
 *
 *   paydesk listen --forward-to http://localhost:3000/webhooks [--live | --all]
 *   paydesk trigger payment.paid|payment.canceled|payment.created [--amount 100.00]
 *   paydesk events list|show|resend|recover ...
 *   paydesk test-clocks create <frozen_time> | get <id> | list | advance <id> <frozen_time> [--wait] | delete <id>
 *   paydesk subscriptions upcoming <id> [--count N] | charge-outcomes <id> <paid|failed|unknown...>
 *
 * The work is `@paydesk/client`'s (the SDK, `listen` and `trigger`); this module declares the
 * commands, calls the client and prints.
 */
import { Argument, type Command, InvalidArgumentError, Option } from "commander"
import { Instant } from "@paydesk/core"
import { Option as Maybe } from "effect"
import { listen, Paydesk, PaydeskApiError, PaydeskError, trigger, triggers } from "@paydesk/client"
import type { EventFilter, SandboxChargeOutcome } from "@paydesk/client"
import * as CliCommands from "./CliCommands.js"
import type { Context } from "./CliProgram.js"

/** The verbs of `paydesk events`. */
export const eventVerbs = ["list", "show", "resend", "recover"] as const

/** Where `listen` learns that it should stop (the process's signals by default). */
export interface Signals {
  once(signal: "SIGINT" | "SIGTERM", listener: () => void): unknown
}

const integer = CliCommands.integer

/** An ISO 8601 date-time with an offset, as the API takes it: named by its option when it is not one (it was refused by the server naming its query field). */
const isoTime = (name: string) => (value: string) => {
  if (Maybe.isNone(Instant.parseIso(value))) throw new InvalidArgumentError(`${name} must be an ISO 8601 date-time with an offset, e.g. 2026-11-30T00:00:00Z`)
  return value
}

const apiKeyOption = () => new Option("--api-key <key>", "the terminal's API key (default: PAYDESK_API_KEY)")

/**
 * `--sandbox` / `--all` (live by default), or `--live` / `--all` (sandbox by default) for `listen`;
 * or `--environment prod|sandbox|all`, as `payments list` takes it.
 */
const environmentOf = (options: { live?: boolean; sandbox?: boolean; all?: boolean; environment?: "prod" | "sandbox" | "all" }, fallback: "prod" | "sandbox") =>
  options.environment ?? (options.all === true ? "all" as const : options.live === true ? "prod" as const : options.sandbox === true ? "sandbox" as const : fallback)

/** `--environment`, beside the flags it can replace (`flags`): one or the other. */
const environmentOption = (flags: ReadonlyArray<string>) => CliCommands.environmentOption().conflicts([...flags])

/** Registers the merchant's commands on `program` (after the operator's: `subscriptions` gets two more). */
export const register = (program: Command, context: Context, signals: Signals = process): void => {
  const { io } = context
  const options = (command: Command) => command.optsWithGlobals() as { apiKey?: string }
  const settings = (command: Command) => {
    const apiKey = options(command).apiKey ?? io.env.PAYDESK_API_KEY
    if (apiKey === undefined || apiKey === "") return null
    return { apiKey, baseUrl: context.url(command), fetch: io.fetch }
  }
  /** An action with the terminal's client; an API or network failure exits 1 with its message, usage 2. */
  const merchant = <Args extends Array<unknown>>(action: (client: Paydesk, command: Command, ...args: Args) => Promise<void>) =>
    async (...received: Array<unknown>) => {
      const command = received.at(-1) as Command
      const client = settings(command)
      if (client === null) return context.fail("PAYDESK_API_KEY (or --api-key) is required: the terminal's API key", 2)
      if (!URL.canParse(client.baseUrl)) return context.fail(`the server URL ${JSON.stringify(client.baseUrl)} is not a URL (--url or PAYDESK_URL)`, 2)
      try {
        await action(new Paydesk(client), command, ...(received.slice(0, -2) as Args))
      } catch (error) {
        if (error instanceof PaydeskApiError) {
          return context.fail(`${error.status} ${error.code}: ${error.message}${error.field === undefined ? "" : ` (field ${error.field})`}`, 1)
        }
        if (error instanceof PaydeskError) return context.fail(`${error.name}: ${error.message}`, 1)
        throw error
      }
    }
  /** `--forward-to`: an http(s) URL, checked before anything is read (it was taken, and every event then failed to be forwarded). */
  const forwardTarget = (value: string): string => {
    const url = URL.parse(value)
    if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) throw new InvalidArgumentError("--forward-to must be an http or https URL, e.g. http://localhost:3000/webhooks")
    return value
  }
  const leaf = (parent: Command, name: string, description: string) => parent.command(name).description(description).addOption(apiKeyOption())

  leaf(program, "listen", "forward a terminal's callbacks to a local URL (PAYDESK_API_KEY)")
    .requiredOption("--forward-to <url>", "where to POST each event, e.g. http://localhost:3000/webhooks", forwardTarget)
    .addOption(new Option("--live", "live events instead of sandbox ones").conflicts("all"))
    .option("--all", "live and sandbox events")
    .addOption(environmentOption(["live", "all"]))
    .action(merchant(async (_client, command) => {
      const given = command.opts() as { forwardTo: string; live?: boolean; all?: boolean; environment?: "prod" | "sandbox" | "all" }
      const environment = environmentOf(given, "sandbox")
      const stop = new AbortController()
      signals.once("SIGINT", () => stop.abort())
      signals.once("SIGTERM", () => stop.abort())
      await listen({
        ...settings(command)!,
        forwardTo: given.forwardTo,
        environment,
        signal: stop.signal,
        onReady: () => io.stdout(`Ready: forwarding ${environment} events of the terminal to ${given.forwardTo} (Ctrl-C to stop)\n`),
        onRetry: (error, delayMs) => io.stderr(`paydesk: reading the events feed failed (${error.message}): trying again in ${Math.round(delayMs / 1000)} s from where it stood\n`),
        onForward: (event, result) =>
          io.stdout(`${event.created_at}  ${event.event_type.padEnd(24)} ${event.id}  -> ${"status" in result ? result.status : `failed: ${result.error}`}\n`)
      })
    }))

  leaf(program, "trigger", "create a sandbox payment that emits the event (PAYDESK_API_KEY)")
    .addArgument(new Argument("<event>", "the event to cause").choices(Object.keys(triggers)))
    .option("--amount <rub>", "the payment's amount in roubles (default 100.00)")
    .action(merchant(async (_client, command, event: string) => {
      const given = command.opts() as { amount?: string }
      context.print(command, await trigger({ ...settings(command)!, event: event as keyof typeof triggers, ...(given.amount === undefined ? {} : { amount: given.amount }) }))
    }))

  // Events
  const events = program.command("events").description("a terminal's callback events: list, show, resend, recover (PAYDESK_API_KEY)")
  const environments = (command: Command) =>
    command.addOption(new Option("--sandbox", "sandbox events instead of live ones").conflicts("all")).option("--all", "live and sandbox events")
      .addOption(environmentOption(["sandbox", "all"]))
  environments(leaf(events, "list", "events, newest first: one line each"))
    .option("--type <type>", "one event type, e.g. payment.paid")
    .option("--object <id>", "of one payment (pay_…) or payout (po_…)")
    .option("--since <iso>", "created at or after", isoTime("--since"))
    .option("--until <iso>", "created before (exclusive)", isoTime("--until"))
    .addOption(new Option("--status <status>", "by delivery status").choices(["pending", "delivered", "failed", "none"]))
    .option("--limit <n>", "at most this many (1 to 100)", integer("--limit", 1, 100))
    .option("--cursor <cursor>", "the next page (printed after a full page)")
    .action(merchant(async (client, command) => {
      const given = command.opts() as { type?: string; object?: string; since?: string; until?: string; status?: string; limit?: number; cursor?: string; sandbox?: boolean; all?: boolean; environment?: "prod" | "sandbox" | "all" }
      const filter: EventFilter = {
        environment: environmentOf(given, "prod"),
        ...(given.type === undefined ? {} : { type: given.type as NonNullable<EventFilter["type"]> }),
        ...(given.object === undefined ? {} : { object_id: given.object }),
        ...(given.since === undefined ? {} : { created_from: given.since }),
        ...(given.until === undefined ? {} : { created_to: given.until }),
        ...(given.status === undefined ? {} : { delivery_status: given.status as NonNullable<EventFilter["delivery_status"]> }),
        ...(given.limit === undefined ? {} : { limit: given.limit }),
        ...(given.cursor === undefined ? {} : { cursor: given.cursor })
      }
      const page = await client.events.list(filter)
      for (const e of page.items) {
        const delivery = e.delivery === null
          ? "no delivery"
          : `${e.delivery.status} (${e.delivery.attempts} attempts${e.delivery.last_status_code === null ? "" : `, last HTTP ${e.delivery.last_status_code}`})`
        io.stdout(`${e.created_at}  ${e.type.padEnd(24)} ${e.id}  ${(e.object_id ?? "").padEnd(40)} #${e.sequence}  ${delivery}\n`)
      }
      if (page.next_cursor !== null) io.stdout(`more: --cursor ${page.next_cursor}\n`)
    }))
  leaf(events, "show", "an event with its deliveries and attempts").argument("<evt_id>")
    .action(merchant(async (client, command, id: string) => context.print(command, await client.events.get(id))))
  leaf(events, "resend", "send an event once more, now").argument("<evt_id>")
    .action(merchant(async (client, command, id: string) => context.print(command, await client.events.resend(id))))
  environments(leaf(events, "recover", "re-queue the events whose delivery failed since a time"))
    .requiredOption("--since <iso>", "events created at or after (ISO 8601)", isoTime("--since"))
    .action(merchant(async (client, command) => {
      const given = command.opts() as { since: string; sandbox?: boolean; all?: boolean; environment?: "prod" | "sandbox" | "all" }
      context.print(command, await client.events.recover({ since: given.since, environment: environmentOf(given, "prod") }))
    }))

  // Test clocks
  const clocks = program.command("test-clocks").description("sandbox time you move: create, get, list, advance, delete (PAYDESK_API_KEY)")
  leaf(clocks, "create", "a clock frozen at a time (attach sandbox payments and subscriptions with test_clock)")
    .argument("<frozen_time>", "ISO 8601 with Z or an offset, e.g. 2026-01-31T10:00:00+03:00")
    .option("--name <name>", "a name to recognise it")
    .action(merchant(async (client, command, frozenTime: string) => {
      const given = command.opts() as { name?: string }
      context.print(command, await client.testClocks.create({ frozen_time: frozenTime, ...(given.name === undefined ? {} : { name: given.name }) }))
    }))
  leaf(clocks, "get", "a clock (status ready or advancing)").argument("<test_clock_id>")
    .action(merchant(async (client, command, id: string) => context.print(command, await client.testClocks.get(id))))
  leaf(clocks, "list", "the terminal's clocks, newest first").option("--page <n>", "page of 50, from 1", integer("--page", 1, 1_000_000))
    .action(merchant(async (client, command) => {
      const given = command.opts() as { page?: number }
      context.print(command, await client.testClocks.list(given.page === undefined ? {} : { page: given.page }))
    }))
  leaf(clocks, "advance", "move a clock to a later time, running its objects' due work on the way")
    .argument("<test_clock_id>").argument("<frozen_time>", "the new time (ISO 8601)")
    .option("--wait", "when the server answers advancing (202), poll until the clock is ready")
    .action(merchant(async (client, command, id: string, frozenTime: string) => {
      const given = command.opts() as { wait?: boolean }
      context.print(command, await client.testClocks.advance(id, frozenTime, { untilReady: given.wait === true }))
    }))
  leaf(clocks, "delete", "delete a clock and every object on it (refused while it advances)").argument("<test_clock_id>")
    .action(merchant(async (client, command, id: string) => context.print(command, await client.testClocks.delete(id))))

  // Subscriptions: beside the operator's commands of the same group, two with the terminal's key.
  const subscriptions = (program.commands.find((c) => c.name() === "subscriptions") ?? program.command("subscriptions"))
    .description("subscriptions of a terminal (upcoming and charge-outcomes: PAYDESK_API_KEY)")
  leaf(subscriptions, "upcoming", "the next charges of a subscription by its schedule (PAYDESK_API_KEY)")
    .argument("<subscription_id>").option("--count <n>", "how many (1 to 60, default 12)", integer("--count", 1, 60))
    .action(merchant(async (client, command, id: string) => {
      const given = command.opts() as { count?: number }
      context.print(command, await client.subscriptions.upcoming(id, given.count))
    }))
  leaf(subscriptions, "charge-outcomes", "sandbox: the sandbox acquirer's answers to a sandbox subscription's next charges (PAYDESK_API_KEY)")
    .argument("<subscription_id>")
    .addArgument(new Argument("<outcomes...>", "paid, failed or unknown, in order").choices(["paid", "failed", "unknown"]))
    .action(merchant(async (client, command, id: string, outcomes: Array<SandboxChargeOutcome>) =>
      context.print(command, await client.subscriptions.programCharges(id, outcomes))))
}
