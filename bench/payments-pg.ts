/**
 * Benchmark: payments created per second through the core's use case on PostgreSQL, next to
 * `pgbench` running the equivalent SQL transaction (access check, order_id lookup, payment
 * insert, outbox event and delivery) on the same database in the same run, as a ratio.
 *
 *   ./run pnpm bench:payments            # embedded PostgreSQL (or DATABASE_URL when set)
 *   PAYMENTS=5000 CONCURRENCY=16 SECONDS=10 ./run pnpm bench:payments
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Payments } from "@paydesk/core"
import { PgStore } from "@paydesk/sql-pg"
import * as BenchDatabase from "./BenchDatabase.js"
import { Kit } from "@paydesk/testkit"

const payments = Number(process.env.PAYMENTS ?? 3000)
const concurrency = Number(process.env.CONCURRENCY ?? 10)
const seconds = Number(process.env.SECONDS ?? 10)

const main = async () => {
  const { url, stop } = await BenchDatabase.open()
  const layer = Kit.layerAround(PgStore.layer(url, { maxConnections: concurrency }))

  const { terminalId, rate } = await Effect.runPromise(
    Effect.gen(function*() {
      const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://merchant.example/cb" })
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      // Warm-up: connections, prepared statements.
      yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) =>
        Payments.create(principal, { amount: "100.00", orderId: `warm-${i}`, test: true }), { concurrency })
      const started = performance.now()
      yield* Effect.forEach(Array.from({ length: payments }, (_, i) => i), (i) =>
        Payments.create(principal, { amount: "1000.50", orderId: `bench-${i}`, description: "bench", test: true }), { concurrency })
      const elapsed = (performance.now() - started) / 1000
      return { terminalId: merchant.terminal.id, rate: payments / elapsed }
    }).pipe(Effect.provide(layer))
  )

  const script = join(mkdtempSync(join(tmpdir(), "paydesk-pgbench-")), "payment.sql")
  writeFileSync(script, `\\set n random(1, 1000000000000)
BEGIN;
SELECT id, account_id, status FROM terminals WHERE id = '${terminalId}';
SELECT id FROM payments WHERE terminal_id = '${terminalId}' AND environment = 'sandbox' AND order_id = 'pgb-' || :client_id || '-' || :n;
INSERT INTO payments (id, terminal_id, order_id, amount, currency, description, metadata, payment_method, environment, status,
  pay_token, csrf_token, subscription_id, fingerprint, qr_payload, expires_at, created_at, updated_at, paid_at, version)
VALUES (gen_random_uuid(), '${terminalId}', 'pgb-' || :client_id || '-' || :n, 1000.50, 'RUB', 'bench', NULL, 'sbp_test', 'sandbox', 'created',
  md5(random()::text) || :n, md5(random()::text), NULL, md5(random()::text), 'sandbox-qr', now() + interval '30 minutes', now(), now(), NULL, 1);
WITH e AS (
  INSERT INTO outbox_events (id, terminal_id, event_type, payment_id, payout_id, body, test, created_at)
  VALUES (gen_random_uuid(), '${terminalId}', 'payment.created', gen_random_uuid(), NULL, '{"event_type":"payment.created"}', true, now())
  RETURNING id
)
INSERT INTO deliveries (id, event_id, terminal_id, status, attempts, next_attempt_at, created_at, updated_at)
SELECT gen_random_uuid(), e.id, '${terminalId}', 'pending', 0, now(), now(), now() FROM e;
COMMIT;
`)
  const output = execFileSync("pgbench", [
    "-n", "-c", String(concurrency), "-j", "2", "-T", String(seconds), "-f", script, url
  ], { encoding: "utf8" })
  const tps = Number(/tps = ([0-9.]+)/.exec(output)?.[1] ?? NaN)
  console.log(`core use case (Payments.create): ${rate.toFixed(1)} payments/s (${payments} payments, concurrency ${concurrency})`)
  console.log(`pgbench, same SQL transaction:    ${tps.toFixed(1)} transactions/s (${seconds} s, ${concurrency} clients)`)
  console.log(`ratio use case / pgbench:          ${(rate / tps).toFixed(3)}`)
  await stop()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
