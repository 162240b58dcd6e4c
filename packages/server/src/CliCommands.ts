/**
 * The operator commands of the `paydesk` CLI, each one call of the operator API (`/admin/v1`),
 * declared on commander: `register(program, send)` adds every group and action with its help.
 * An action turns its arguments into a `Call` and hands it to `send` (which performs it, prints the
 * answer and sets the exit code; tests pass a recorder).
 */
import { Argument, type Command, InvalidArgumentError, Option } from "commander"
import { Result } from "effect"
import { Idempotency } from "@paydesk/core"

/** One call of the operator API. */
export interface Call {
  readonly method: "GET" | "POST" | "PUT"
  /** Path under `/admin/v1`, with its query string. */
  readonly path: string
  readonly body?: Record<string, unknown>
  /** Sent as `Idempotency-Key` (an operator's move a script may repeat after a lost answer). */
  readonly idempotencyKey?: string | undefined
  /** A call that cannot be undone: asked before it is made when the CLI runs in a terminal (not with `--yes`). */
  readonly confirm?: Confirm
}

/** What is asked before a call that cannot be undone. */
export interface Confirm {
  /** What the call does and the question (`[y/N]` is added). */
  readonly question: string
  /** The object the call acts on, read first (a path under `/admin/v1`) and shown by these fields. */
  readonly show?: { readonly path: string; readonly fields: ReadonlyArray<string> }
}

/** Performs a call (and prints its answer). */
export type Send = (call: Call) => Promise<void>

/** Reads a secret that must not appear on the command line (`--password-stdin`). */
export type ReadStdin = () => Promise<string>

const id = (value: string) => encodeURIComponent(value)

/** `--password <password>` or `--password-stdin`. */
interface PasswordOptions {
  readonly password?: string
  readonly passwordStdin?: boolean
}

const query = (entries: Record<string, string | undefined>) => {
  const params = new URLSearchParams(Object.entries(entries).filter((e): e is [string, string] => e[1] !== undefined))
  return params.size > 0 ? `?${params}` : ""
}

const positiveInteger = (value: string) => {
  if (!/^[1-9]\d{0,8}$/.test(value)) throw new InvalidArgumentError("must be a positive integer")
  return value
}

/** An option's whole number from `min` to `max`, named by `name` when it is not one (a usage error, exit 2). */
export const integer = (name: string, min: number, max: number) => (value: string) => {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`)
  return n
}

const choices = (option: Option, values: ReadonlyArray<string>) => option.choices(values)

/** `--environment prod|sandbox|all`: `payments list`'s, and the merchant's event commands' beside their flags. */
export const environmentOption = (): Option =>
  choices(new Option("--environment <environment>", "live (prod), sandbox or all"), ["prod", "sandbox", "all"])

/** `--page <n>` of the operator's list commands: as the server checks it (1 to 999 999), a usage error (exit 2), not its 400. */
const pageOption = () => new Option("--page <n>", "page of 50, from 1").argParser((value: string) => String(integer("--page", 1, 999_999)(value)))

/**
 * `--idempotency-key <key>` of an operator's move: a script that repeats the command with the same
 * key (after it could not tell whether the first call arrived) gets the object again, not 409.
 */
const idempotencyKeyOption = () =>
  new Option("--idempotency-key <key>", "sent as Idempotency-Key: the same command repeated with the same key (after a lost answer) answers the object and moves nothing")
    // Checked here as the server checks it: a key an HTTP header cannot carry (`ключ`) failed in
    // `fetch` before anything was sent, which read as "cannot reach" (a review), and spaces at its
    // ends were trimmed unseen.
    .argParser((value: string) => {
      const valid = Idempotency.validateKey(value)
      if (Result.isFailure(valid)) throw new InvalidArgumentError(valid.failure.message.replace("Idempotency-Key", "the key"))
      return value
    })

/** An empty value clears a nullable setting. */
const nullable = (value: string | undefined) => (value === undefined ? undefined : value === "" ? null : value)

/** Registers every operator command on `program`. */
export const register = (program: Command, send: Send, readStdin: ReadStdin): void => {
  const group = (name: string, description: string) => program.command(name).description(description)
  /** A password from exactly one of `--password` and `--password-stdin` (its last line break dropped). */
  const passwordOf = async (options: PasswordOptions, command: Command): Promise<string> => {
    if ((options.password === undefined) === (options.passwordStdin !== true)) {
      command.error("error: give exactly one of --password <password> and --password-stdin", { code: "paydesk.usage" })
    }
    return options.passwordStdin === true ? (await readStdin()).replace(/\r?\n$/, "") : options.password!
  }

  // Accounts
  const accounts = group("accounts", "merchant accounts and their owners")
  accounts.command("create").description("create an account with its owner user")
    .requiredOption("--name <name>", "account name")
    .requiredOption("--email <email>", "the owner's e-mail (dashboard login)")
    .option("--password <password>", "the owner's password (visible in the process list: prefer --password-stdin)")
    .option("--password-stdin", "read the owner's password from standard input")
    .action(async (options: { name: string; email: string } & PasswordOptions, command: Command) => {
      const password = await passwordOf(options, command)
      await send({ method: "POST", path: "/accounts", body: { name: options.name, owner_email: options.email, owner_password: password } })
    })
  accounts.command("list").description("accounts, newest first").addOption(pageOption())
    .action((options: { page?: string }) => send({ method: "GET", path: `/accounts${query({ page: options.page })}` }))
  accounts.command("get").description("an account with its terminals and its dashboard users").argument("<account_id>")
    .action((accountId: string) => send({ method: "GET", path: `/accounts/${id(accountId)}` }))

  // Terminals
  const terminals = group("terminals", "terminals (shops) of an account: settings, status, signing secret")
  terminals.command("create").description("create a terminal; prints its API key and signing secret (shown once)")
    .requiredOption("--account <account_id>", "the account")
    .requiredOption("--name <name>", "terminal name")
    .option("--h2h", "host-to-host: the merchant redirects payers to the acquirer itself")
    .option("--callback-url <url>", "where callbacks are sent")
    .action((options: { account: string; name: string; h2h?: boolean; callbackUrl?: string }) =>
      send({
        method: "POST",
        path: "/terminals",
        body: { account_id: options.account, name: options.name, h2h: options.h2h === true, ...(options.callbackUrl === undefined ? {} : { callback_url: options.callbackUrl }) }
      }))
  terminals.command("list").description("the terminals of an account").requiredOption("--account <account_id>", "the account")
    .action((options: { account: string }) => send({ method: "GET", path: `/accounts/${id(options.account)}/terminals` }))
  terminals.command("get").description("a terminal and its settings").argument("<terminal_id>")
    .action((terminalId: string) => send({ method: "GET", path: `/terminals/${id(terminalId)}` }))
  terminals.command("update").description("change a terminal's settings (an empty value clears a URL or the conversion time)")
    .argument("<terminal_id>")
    .option("--callback-url <url>", "where callbacks are sent")
    .option("--success-redirect-url <url>", "where the payer page sends a payer after paying")
    .option("--fail-redirect-url <url>", "where the payer page sends a payer after a failure")
    .addOption(choices(new Option("--conversion-mode <mode>", "when roubles convert to USDT"), ["instant", "scheduled"]))
    .option("--conversion-time <HH:MM>", "daily conversion time (Moscow) in scheduled mode")
    .option("--branding", "show the platform's branding on payer pages")
    .option("--no-branding", "hide the platform's branding on payer pages")
    .action((terminalId: string, options: {
      callbackUrl?: string
      successRedirectUrl?: string
      failRedirectUrl?: string
      conversionMode?: string
      conversionTime?: string
      branding?: boolean
    }, command: Command) => {
      const body = Object.fromEntries(Object.entries({
        callback_url: nullable(options.callbackUrl),
        success_redirect_url: nullable(options.successRedirectUrl),
        fail_redirect_url: nullable(options.failRedirectUrl),
        conversion_mode: options.conversionMode,
        conversion_time: nullable(options.conversionTime),
        show_platform_branding: options.branding
      }).filter(([, v]) => v !== undefined))
      if (Object.keys(body).length === 0) command.error("error: nothing to change: give at least one setting (see --help)", { code: "paydesk.usage" })
      return send({ method: "PUT", path: `/terminals/${id(terminalId)}`, body })
    })
  terminals.command("status").description("enable or disable a terminal").argument("<terminal_id>")
    .addArgument(new Argument("<status>", "active or disabled").choices(["active", "disabled"]))
    .action((terminalId: string, status: string) => send({ method: "POST", path: `/terminals/${id(terminalId)}/status`, body: { status } }))
  terminals.command("rotate-secret").description("replace the callback signing secret (the new one is shown once)").argument("<terminal_id>")
    // A rotation repeated after a lost answer without the key rotates twice: the secret nobody saw
    // would sign X-Signature once the overlap ends (an outside probe).
    .addOption(idempotencyKeyOption())
    .action((terminalId: string, options: { idempotencyKey?: string }) =>
      send({
        method: "POST",
        path: `/terminals/${id(terminalId)}/signing-secret/rotate`,
        body: {},
        idempotencyKey: options.idempotencyKey,
        confirm: {
          question: "The merchant must install the new signing secret before the overlap ends (the current one then stops signing). Replace this terminal's callback signing secret?",
          show: { path: `/terminals/${id(terminalId)}`, fields: ["terminal_id", "name", "account_id", "callback_url"] }
        }
      }))

  // API keys
  const apiKeys = group("api-keys", "API keys of a terminal")
  apiKeys.command("create").description("issue an API key (shown once)").requiredOption("--terminal <terminal_id>", "the terminal")
    .option("--no-subscription-write", "a key that cannot create or stop subscriptions or program sandbox charge outcomes (it can still create payments and payouts)")
    // The option's first name, kept working: it named a key that was never read-only.
    .addOption(new Option("--read-only").hideHelp())
    .action((options: { terminal: string; subscriptionWrite: boolean; readOnly?: boolean }) =>
      send({
        method: "POST",
        path: `/terminals/${id(options.terminal)}/api-keys`,
        body: { subscription_write: options.subscriptionWrite && options.readOnly !== true }
      }))
  apiKeys.command("list").description("the terminal's keys (prefixes only)").requiredOption("--terminal <terminal_id>", "the terminal")
    .action((options: { terminal: string }) => send({ method: "GET", path: `/terminals/${id(options.terminal)}/api-keys` }))
  apiKeys.command("revoke").description("revoke a key at once").argument("<key_id>").requiredOption("--terminal <terminal_id>", "the terminal")
    .action((keyId: string, options: { terminal: string }) =>
      send({
        method: "POST",
        path: `/terminals/${id(options.terminal)}/api-keys/${id(keyId)}/revoke`,
        body: {},
        confirm: { question: `Every request with API key ${keyId} is refused from now on. Revoke it (terminal ${options.terminal})?` }
      }))

  // Users
  const users = group("users", "dashboard users (an account's users and their ids: accounts get)")
  users.command("logout").description("end every session of a user").argument("<user_id>")
    .action((userId: string) => send({ method: "POST", path: `/users/${id(userId)}/logout`, body: {} }))
  users.command("set-password").description("set a user's password (forgotten or leaked) and end every session of the user").argument("<user_id>")
    .option("--password <password>", "the new password (visible in the process list: prefer --password-stdin)")
    .option("--password-stdin", "read the new password from standard input")
    .action(async (userId: string, options: PasswordOptions, command: Command) => {
      const password = await passwordOf(options, command)
      await send({ method: "POST", path: `/users/${id(userId)}/password`, body: { password } })
    })

  // Plans
  group("plans", "subscription plans").command("create").description("create a plan for terminals")
    .requiredOption("--terminals <ids>", "comma-separated terminal ids")
    .requiredOption("--code <code>", "plan code")
    .requiredOption("--name <name>", "plan name")
    .addOption(choices(new Option("--interval <interval>", "billing interval").makeOptionMandatory(), ["day", "month", "quarter", "half_year", "year"]))
    .addOption(choices(new Option("--schedule <kind>", "calendar periods or fixed days"), ["calendar", "fixed_days"]))
    .option("--cap <rub>", "ceiling mode: the most a charge may take")
    .option("--payer-amount <rub>", "fixed mode: what the payer pays")
    .option("--merchant-amount <rub>", "fixed mode: what the merchant gets")
    .option("--max-cycles <n>", "number of charges at most", positiveInteger)
    .requiredOption("--consent-text <text>", "text the payer consents to")
    .requiredOption("--policy-version <version>", "version of the merchant's policy")
    .action((options: {
      terminals: string
      code: string
      name: string
      interval: string
      schedule?: string
      cap?: string
      payerAmount?: string
      merchantAmount?: string
      maxCycles?: string
      consentText: string
      policyVersion: string
    }, command: Command) => {
      const fixed = options.payerAmount !== undefined || options.merchantAmount !== undefined
      if ((options.cap !== undefined) === fixed || (fixed && (options.payerAmount === undefined || options.merchantAmount === undefined))) {
        command.error("error: give --cap <rub>, or both --payer-amount <rub> and --merchant-amount <rub>", { code: "paydesk.usage" })
      }
      return send({
        method: "POST",
        path: "/plans",
        body: {
          terminal_ids: options.terminals.split(",").map((t) => t.trim()).filter((t) => t !== ""),
          code: options.code,
          name: options.name,
          interval: options.interval,
          ...(options.schedule === undefined ? {} : { schedule: options.schedule }),
          ...(options.cap === undefined ? { payer_amount_rub: options.payerAmount, merchant_amount_rub: options.merchantAmount } : { cap_amount_rub: options.cap }),
          ...(options.maxCycles === undefined ? {} : { max_cycles: Number(options.maxCycles) }),
          consent_text: options.consentText,
          policy_version: options.policyVersion
        }
      })
    })

  // Payments
  const payments = group("payments", "payments of a terminal; refunds and chargebacks")
  payments.command("list").description("a terminal's payments, newest first").requiredOption("--terminal <terminal_id>", "the terminal")
    .addOption(environmentOption().default("prod"))
    .addOption(pageOption())
    .action((options: { terminal: string; environment: string; page?: string }) =>
      send({ method: "GET", path: `/terminals/${id(options.terminal)}/payments${query({ environment: options.environment, page: options.page })}` }))
  payments.command("get").description("a payment (pay_<uuid> or UUID)").argument("<payment_id>")
    .action((paymentId: string) => send({ method: "GET", path: `/payments/${id(paymentId)}` }))
  for (const move of ["refund", "chargeback"] as const) {
    payments.command(move).description(`record a ${move} of a paid live payment`).argument("<payment_id>").addOption(idempotencyKeyOption())
      .action((paymentId: string, options: { idempotencyKey?: string }) =>
        send({
          method: "POST",
          path: `/payments/${id(paymentId)}/${move}`,
          body: {},
          idempotencyKey: options.idempotencyKey,
          confirm: {
            question: `A ${move} is booked against the terminal's balance and cannot be undone. Record a ${move} of this payment?`,
            show: { path: `/payments/${id(paymentId)}`, fields: ["payment_id", "terminal_id", "order_id", "amount", "payment_currency", "status", "environment"] }
          }
        }))
  }

  // Subscriptions
  const subscriptions = group("subscriptions", "subscriptions of a terminal")
  subscriptions.command("list").description("a terminal's subscriptions, newest first").requiredOption("--terminal <terminal_id>", "the terminal")
    .addOption(choices(new Option("--state <state>", "binding state"), ["new", "active", "stop"]))
    .addOption(pageOption())
    .action((options: { terminal: string; state?: string; page?: string }) =>
      send({ method: "GET", path: `/terminals/${id(options.terminal)}/subscriptions${query({ state: options.state, page: options.page })}` }))
  subscriptions.command("get").description("a subscription").argument("<subscription_id>")
    .action((subscriptionId: string) => send({ method: "GET", path: `/subscriptions/${id(subscriptionId)}` }))
  for (const move of ["resume", "stop"] as const) {
    subscriptions.command(move).description(move === "resume" ? "resume a subscription in review" : "stop a subscription").argument("<subscription_id>")
      .action((subscriptionId: string) =>
        send({
          method: "POST",
          path: `/subscriptions/${id(subscriptionId)}/${move}`,
          body: {},
          ...(move === "stop"
            ? {
              confirm: {
                question: "A stopped subscription is charged no more; charging the payer again takes a new subscription and their consent. Stop this subscription?",
                show: { path: `/subscriptions/${id(subscriptionId)}`, fields: ["id", "terminal_id", "plan_code", "payer_amount_rub", "interval", "billing_status", "environment"] }
              }
            }
            : {})
        }))
  }

  // Payouts
  const payouts = group("payouts", "USDT payouts of a terminal")
  payouts.command("list").description("a terminal's payouts, newest first").requiredOption("--terminal <terminal_id>", "the terminal").addOption(pageOption())
    .action((options: { terminal: string; page?: string }) =>
      send({ method: "GET", path: `/terminals/${id(options.terminal)}/payouts${query({ page: options.page })}` }))
  payouts.command("get").description("a payout (po_<uuid> or UUID)").argument("<payout_id>")
    .action((payoutId: string) => send({ method: "GET", path: `/payouts/${id(payoutId)}` }))
  const payoutShown = (payoutId: string) => ({
    path: `/payouts/${id(payoutId)}`,
    fields: ["id", "terminal_id", "amount_usdt", "wallet_address", "network", "status", "created_at"]
  })
  payouts.command("approve").description("approve a payout waiting for review").argument("<payout_id>").addOption(idempotencyKeyOption())
    .action((payoutId: string, options: { idempotencyKey?: string }) =>
      send({
        method: "POST",
        path: `/payouts/${id(payoutId)}/approve`,
        body: {},
        idempotencyKey: options.idempotencyKey,
        confirm: { question: "The USDT is sent to the wallet, which cannot be undone. Approve this payout?", show: payoutShown(payoutId) }
      }))
  payouts.command("reject").description("reject a payout").argument("<payout_id>").option("--reason <text>", "why (shown to the merchant)")
    .addOption(idempotencyKeyOption())
    .action((payoutId: string, options: { reason?: string; idempotencyKey?: string }) =>
      send({
        method: "POST",
        path: `/payouts/${id(payoutId)}/reject`,
        body: options.reason === undefined ? {} : { reason: options.reason },
        idempotencyKey: options.idempotencyKey,
        confirm: { question: "Its amount goes back to the terminal's balance and it cannot be approved afterwards. Reject this payout?", show: payoutShown(payoutId) }
      }))

  // Deliveries
  const deliveries = group("deliveries", "the callback delivery log")
  deliveries.command("list").description("deliveries, newest written first")
    .option("--terminal <terminal_id>", "of one terminal")
    .option("--payment <payment_id>", "of one payment")
    .addOption(choices(new Option("--status <status>", "by status"), ["pending", "delivered", "failed"]))
    .addOption(environmentOption())
    // Checked here as the server checks it: a usage error (exit 2), not the server's 400 (an outside probe).
    .option("--limit <n>", "at most this many (1 to 500, default 50)", integer("--limit", 1, 500))
    .action((options: { terminal?: string; payment?: string; status?: string; environment?: string; limit?: number }) =>
      send({
        method: "GET",
        path: `/deliveries${query({
          terminal_id: options.terminal,
          payment_id: options.payment,
          status: options.status,
          environment: options.environment,
          limit: options.limit === undefined ? undefined : String(options.limit)
        })}`
      }))
  deliveries.command("get").alias("show").description("a delivery with its event (the exact body sent) and its attempts").argument("<delivery_id>")
    .action((deliveryId: string) => send({ method: "GET", path: `/deliveries/${id(deliveryId)}` }))

  // The emulated acquirer and the deployment
  const acquirer = group("acquirer", "answers of the (emulated) acquirer")
  acquirer.command("settle").description("settle a payment as the acquirer would").argument("<payment_id>")
    .addArgument(new Argument("[outcome]", "processing, paid or failed").choices(["processing", "paid", "failed"]).default("paid"))
    .action((paymentId: string, outcome: string) => send({ method: "POST", path: `/acquirer/payments/${id(paymentId)}/outcome`, body: { outcome } }))
  acquirer.command("charges").description("program the answers to a subscription's next charges").argument("<subscription_id>")
    .argument("<outcomes...>", "paid, failed or unknown, in order")
    .action((subscriptionId: string, outcomes: Array<string>) =>
      send({ method: "POST", path: `/acquirer/subscriptions/${id(subscriptionId)}/charge-outcomes`, body: { outcomes } }))
  acquirer.command("resolve").description("the bank's final answer to a subscription's charge it answered unknown (then: subscriptions resume)")
    .argument("<subscription_id>")
    .addArgument(new Argument("<outcome>", "paid or failed").choices(["paid", "failed"]))
    .action((subscriptionId: string, outcome: string) =>
      send({ method: "POST", path: `/acquirer/subscriptions/${id(subscriptionId)}/unknown-charge`, body: { outcome } }))
  group("rate", "the USDT/RUB rate").command("set").description("set the general rate").argument("<rate>", "RUB per USDT, e.g. 95.50")
    .action((rate: string) => send({ method: "PUT", path: "/rate", body: { rate } }))
  group("clock", "the manual clock (PAYDESK_CLOCK=manual)").command("set").description("set the server's time").argument("<time>", "ISO 8601 with an offset")
    .action((time: string) => send({ method: "POST", path: "/clock", body: { now: time } }))
  group("work", "background work").command("run").description("run the work due now and report it")
    .action(() => send({ method: "POST", path: "/work/run", body: {} }))
}
