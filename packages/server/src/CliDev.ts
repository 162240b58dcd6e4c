/**
 * The development commands of the `paydesk` CLI, for a merchant's API key (not the operator token):
 *
 *   paydesk listen --forward-to http://localhost:3000/webhooks [--live | --all]
 *   paydesk trigger payment.paid|payment.canceled|payment.created [--amount 100.00]
 *   paydesk events list [--type T] [--object pay_...] [--since ISO] [--until ISO] [--status failed] [--sandbox | --all] [--limit N] [--cursor C]
 *   paydesk events show <evt_id>
 *   paydesk events resend <evt_id>
 *   paydesk events recover --since ISO [--sandbox | --all]
 *
 * `PAYDESK_API_KEY` (or `--api-key`) names the terminal, `PAYDESK_URL` (or `--url`) the server.
 * The work is `@paydesk/client`'s `listen` and `trigger`; this module only parses and prints.
 */
import { listen, Paydesk, PaydeskError, trigger, triggers } from "@paydesk/client"
import type { EventFilter } from "@paydesk/client"
import { parseArgs } from "node:util"

/** Whether argv names a development command. */
export const isDevCommand = (argv: ReadonlyArray<string>): boolean => argv[0] === "listen" || argv[0] === "trigger" || argv[0] === "events"

/** The verbs of `paydesk events`. */
export const eventVerbs = ["list", "show", "resend", "recover"] as const

/** Options of a development command, from argv and the environment. */
export const parse = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>) => {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      "forward-to": { type: "string" },
      "api-key": { type: "string" },
      url: { type: "string" },
      amount: { type: "string" },
      live: { type: "boolean" },
      sandbox: { type: "boolean" },
      all: { type: "boolean" },
      type: { type: "string" },
      object: { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      status: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" }
    }
  })
  const apiKey = values["api-key"] ?? env.PAYDESK_API_KEY
  if (apiKey === undefined || apiKey === "") throw new Error("PAYDESK_API_KEY (or --api-key) is required: the terminal's API key")
  const baseUrl = (values.url ?? env.PAYDESK_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "")
  const [command, event] = positionals
  if (command === "listen") {
    const forwardTo = values["forward-to"]
    if (forwardTo === undefined) throw new Error("--forward-to is required, e.g. --forward-to http://localhost:3000/webhooks")
    const environment = values.all === true ? "all" as const : values.live === true ? "prod" as const : "sandbox" as const
    return { _tag: "Listen" as const, apiKey, baseUrl, forwardTo, environment }
  }
  if (command === "events") {
    const verb = event
    if (verb === undefined || !(eventVerbs as ReadonlyArray<string>).includes(verb)) throw new Error(`paydesk events <verb>: one of ${eventVerbs.join(", ")}`)
    const environment = values.all === true ? "all" as const : values.sandbox === true ? "sandbox" as const : "prod" as const
    if (verb === "show" || verb === "resend") {
      const id = positionals[2]
      if (id === undefined) throw new Error(`paydesk events ${verb} <evt_id>`)
      return { _tag: "Events" as const, apiKey, baseUrl, verb, id, environment }
    }
    if (verb === "recover") {
      if (values.since === undefined) throw new Error("paydesk events recover --since <ISO 8601 time>: re-queues the events that failed since then")
      return { _tag: "Events" as const, apiKey, baseUrl, verb, since: values.since, environment }
    }
    const limit = values.limit === undefined ? undefined : Number(values.limit)
    if (limit !== undefined && !Number.isInteger(limit)) throw new Error("--limit must be an integer")
    const filter: EventFilter = {
      environment,
      ...(values.type === undefined ? {} : { type: values.type as NonNullable<EventFilter["type"]> }),
      ...(values.object === undefined ? {} : { object_id: values.object }),
      ...(values.since === undefined ? {} : { created_from: values.since }),
      ...(values.until === undefined ? {} : { created_to: values.until }),
      ...(values.status === undefined ? {} : { delivery_status: values.status as NonNullable<EventFilter["delivery_status"]> }),
      ...(limit === undefined ? {} : { limit }),
      ...(values.cursor === undefined ? {} : { cursor: values.cursor })
    }
    return { _tag: "Events" as const, apiKey, baseUrl, verb, filter, environment }
  }
  if (event === undefined || !(event in triggers)) throw new Error(`paydesk trigger <event>: one of ${Object.keys(triggers).join(", ")}`)
  return { _tag: "Trigger" as const, apiKey, baseUrl, event, ...(values.amount === undefined ? {} : { amount: values.amount }) }
}

/** Runs a development command until it ends (listen: until SIGINT or SIGTERM). */
export const run = async (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): Promise<void> => {
  const command = parse(argv, env)
  const print = (line: string) => process.stdout.write(`${line}\n`)
  try {
    if (command._tag === "Events") {
      const client = new Paydesk({ apiKey: command.apiKey, baseUrl: command.baseUrl })
      if ("id" in command) {
        print(JSON.stringify(command.verb === "show" ? await client.events.get(command.id) : await client.events.resend(command.id), null, 2))
      } else if ("since" in command) {
        print(JSON.stringify(await client.events.recover({ since: command.since, environment: command.environment })))
      } else {
        const page = await client.events.list(command.filter)
        for (const e of page.items) {
          const delivery = e.delivery === null ? "no delivery" : `${e.delivery.status} (${e.delivery.attempts} attempts${e.delivery.last_status_code === null ? "" : `, last HTTP ${e.delivery.last_status_code}`})`
          print(`${e.created_at}  ${e.type.padEnd(24)} ${e.id}  ${(e.object_id ?? "").padEnd(40)} #${e.sequence}  ${delivery}`)
        }
        if (page.next_cursor !== null) print(`more: --cursor ${page.next_cursor}`)
      }
      return
    }
    if (command._tag === "Trigger") {
      const payment = await trigger(command)
      print(JSON.stringify(payment, null, 2))
      return
    }
    const stop = new AbortController()
    process.once("SIGINT", () => stop.abort())
    process.once("SIGTERM", () => stop.abort())
    await listen({
      ...command,
      signal: stop.signal,
      onReady: () => print(`Ready: forwarding ${command.environment} events of the terminal to ${command.forwardTo} (Ctrl-C to stop)`),
      onForward: (event, result) =>
        print(`${event.created_at}  ${event.event_type.padEnd(24)} ${event.id}  -> ${"status" in result ? result.status : `failed: ${result.error}`}`)
    })
  } catch (error) {
    if (error instanceof PaydeskError) throw new Error(`${error.name}: ${error.message}`)
    throw error
  }
}
