/**
 * The versioned schema of Paydesk on PostgreSQL, run by `PgMigrator` on start.
 *
 * Migrations are recorded in `effect_sql_migrations` and run once each, in order, under an
 * advisory lock, so starting several processes at once or twice in a row is safe. The schema
 * makes the rules hold in the database itself: unique order ids per terminal and environment,
 * one idempotency record per (terminal, scope, key), one nonce per (API key, nonce), one charge
 * attempt per (subscription, cycle, attempt), money as `numeric`, time as `timestamptz`,
 * foreign keys and check constraints on every status.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Runs a script statement by statement (the extended protocol takes one statement at a time). */
const script = (text: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const statement of text.split(/;\s*\n/).map((s) => s.trim()).filter((s) => s.length > 0)) {
      yield* sql.unsafe(statement)
    }
  })

const initial = script(`
CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE users (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  email text NOT NULL UNIQUE CHECK (email = lower(email)),
  password_hash text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner')),
  created_at timestamptz NOT NULL
);

CREATE TABLE terminals (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  name text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'disabled')),
  h2h boolean NOT NULL,
  callback_url text,
  success_redirect_url text,
  fail_redirect_url text,
  conversion_mode text NOT NULL CHECK (conversion_mode IN ('instant', 'scheduled')),
  conversion_time text CHECK (conversion_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  next_conversion_at timestamptz,
  show_platform_branding boolean NOT NULL,
  signing_secret_encrypted text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX terminals_account ON terminals (account_id);
CREATE INDEX terminals_conversion_due ON terminals (next_conversion_at) WHERE next_conversion_at IS NOT NULL;

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  subscription_write boolean NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX api_keys_terminal ON api_keys (terminal_id);

CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id),
  family_id uuid NOT NULL,
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX sessions_family ON sessions (family_id);

CREATE TABLE plans (
  id uuid PRIMARY KEY,
  code text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  name text NOT NULL,
  interval text NOT NULL CHECK (interval IN ('day', 'month', 'quarter', 'half_year', 'year')),
  schedule text NOT NULL CHECK (schedule IN ('calendar', 'fixed_days')),
  mode text NOT NULL CHECK (mode IN ('fixed', 'ceiling')),
  cap_amount numeric(20, 2) CHECK (cap_amount > 0),
  payer_amount numeric(20, 2) CHECK (payer_amount > 0),
  merchant_amount numeric(20, 2) CHECK (merchant_amount > 0),
  max_cycles integer CHECK (max_cycles >= 1),
  consent_text text NOT NULL,
  policy_version text NOT NULL,
  active boolean NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (code, version),
  CHECK ((mode = 'ceiling' AND cap_amount IS NOT NULL) OR (mode = 'fixed' AND payer_amount IS NOT NULL AND merchant_amount IS NOT NULL))
);

CREATE TABLE plan_terminals (
  plan_id uuid NOT NULL REFERENCES plans(id),
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  position integer NOT NULL,
  PRIMARY KEY (plan_id, terminal_id)
);
CREATE INDEX plan_terminals_terminal ON plan_terminals (terminal_id);

CREATE TABLE subscriptions (
  id uuid PRIMARY KEY,
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  plan_id uuid NOT NULL REFERENCES plans(id),
  payer_id text,
  merchant_subscription_ref text,
  description text,
  provider_state text NOT NULL CHECK (provider_state IN ('new', 'active', 'stop')),
  billing_status text NOT NULL CHECK (billing_status IN ('consent_pending', 'pending', 'enabled', 'review', 'stop_pending', 'stopped')),
  mode text NOT NULL CHECK (mode IN ('fixed', 'ceiling')),
  plan_code text NOT NULL,
  plan_version integer NOT NULL,
  interval text NOT NULL CHECK (interval IN ('day', 'month', 'quarter', 'half_year', 'year')),
  schedule text NOT NULL CHECK (schedule IN ('calendar', 'fixed_days')),
  merchant_amount numeric(20, 2) NOT NULL CHECK (merchant_amount > 0),
  payer_amount numeric(20, 2) NOT NULL CHECK (payer_amount > 0),
  max_cycles integer CHECK (max_cycles >= 1),
  consent_text text NOT NULL,
  policy_version text NOT NULL,
  h2h boolean NOT NULL,
  successful_cycles integer NOT NULL CHECK (successful_cycles >= 0),
  consecutive_failures integer NOT NULL CHECK (consecutive_failures >= 0),
  next_cycle_index integer NOT NULL CHECK (next_cycle_index >= 0),
  next_charge_at timestamptz,
  charge_lease_until timestamptz,
  first_payment_id uuid,
  review_reason text,
  pay_token text NOT NULL UNIQUE,
  csrf_token text NOT NULL,
  redirect_url text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  activated_at timestamptz,
  stopped_at timestamptz,
  version integer NOT NULL,
  CHECK (billing_status <> 'stopped' OR next_charge_at IS NULL)
);
CREATE INDEX subscriptions_terminal ON subscriptions (terminal_id, created_at DESC);
CREATE INDEX subscriptions_due ON subscriptions (next_charge_at)
  WHERE provider_state = 'active' AND billing_status = 'enabled';
CREATE INDEX subscriptions_stop_pending ON subscriptions (updated_at) WHERE billing_status = 'stop_pending';

CREATE TABLE payments (
  id uuid PRIMARY KEY,
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  order_id text NOT NULL,
  amount numeric(20, 2) NOT NULL CHECK (amount > 0),
  currency text NOT NULL CHECK (currency = 'RUB'),
  description text,
  metadata jsonb,
  payment_method text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('prod', 'sandbox')),
  status text NOT NULL CHECK (status IN ('created', 'processing', 'paid', 'canceled', 'expired', 'chargeback', 'refunded')),
  pay_token text NOT NULL UNIQUE,
  csrf_token text NOT NULL,
  subscription_id uuid REFERENCES subscriptions(id),
  fingerprint text NOT NULL,
  qr_payload text,
  expires_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  paid_at timestamptz,
  settlement_merchant_amount numeric(20, 2),
  settlement_usdt numeric(20, 6),
  settlement_rate numeric(20, 6),
  settlement_converted_at timestamptz,
  version integer NOT NULL,
  UNIQUE (terminal_id, environment, order_id)
);
CREATE INDEX payments_list ON payments (terminal_id, created_at DESC, id DESC);
CREATE INDEX payments_expiry ON payments (expires_at) WHERE status IN ('created', 'processing');
CREATE INDEX payments_unconverted ON payments (terminal_id)
  WHERE status = 'paid' AND settlement_merchant_amount IS NOT NULL AND settlement_usdt IS NULL;
CREATE INDEX payments_subscription ON payments (subscription_id) WHERE subscription_id IS NOT NULL;

CREATE TABLE charges (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  cycle_number integer NOT NULL CHECK (cycle_number >= 0),
  attempt integer NOT NULL CHECK (attempt >= 1),
  kind text NOT NULL CHECK (kind IN ('first', 'recurring')),
  status text NOT NULL CHECK (status IN ('pending', 'payed', 'fail', 'unconfirmed', 'stop')),
  validation_status text NOT NULL CHECK (validation_status IN ('accepted', 'review')),
  validation_reason text,
  payment_id uuid REFERENCES payments(id),
  amount numeric(20, 2) NOT NULL CHECK (amount > 0),
  expected_amount numeric(20, 2) NOT NULL,
  idempotency_key text NOT NULL UNIQUE,
  message text,
  scheduled_at timestamptz NOT NULL,
  actual_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (subscription_id, cycle_number, attempt)
);
CREATE INDEX charges_history ON charges (subscription_id, created_at DESC);

CREATE TABLE payouts (
  id uuid PRIMARY KEY,
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  amount_usdt numeric(20, 6) NOT NULL CHECK (amount_usdt > 0),
  wallet_address text NOT NULL,
  network text NOT NULL,
  status text NOT NULL CHECK (status IN ('created', 'pending', 'processing', 'completed', 'rejected')),
  idempotency_key text,
  fingerprint text NOT NULL,
  network_tx_id text,
  reject_reason text,
  lease_until timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL
);
CREATE INDEX payouts_terminal ON payouts (terminal_id, created_at DESC);
CREATE INDEX payouts_due ON payouts (status, created_at) WHERE status IN ('created', 'processing');

CREATE TABLE ledger_entries (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  account text NOT NULL CHECK (account IN ('rub_pending', 'usdt_available', 'usdt_hold')),
  currency text NOT NULL CHECK (currency IN ('RUB', 'USDT')),
  amount numeric(20, 6) NOT NULL,
  kind text NOT NULL CHECK (kind IN ('payment_credit', 'conversion', 'payout_hold', 'payout_release', 'payout_sent', 'refund', 'chargeback')),
  ref_id uuid NOT NULL,
  created_at timestamptz NOT NULL,
  CHECK ((account = 'rub_pending') = (currency = 'RUB'))
);
CREATE INDEX ledger_terminal ON ledger_entries (terminal_id, account);
CREATE INDEX ledger_ref ON ledger_entries (ref_id);

CREATE TABLE outbox_events (
  seq bigserial UNIQUE,
  id uuid PRIMARY KEY,
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  event_type text NOT NULL CHECK (event_type IN ('payment.created', 'payment.paid', 'payment.canceled', 'payment.expired',
    'payment.chargeback', 'payment.refunded', 'refund_request.completed', 'payout.completed')),
  payment_id uuid,
  payout_id uuid,
  body text NOT NULL,
  test boolean NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX outbox_events_payment ON outbox_events (payment_id) WHERE payment_id IS NOT NULL;
CREATE INDEX outbox_events_terminal ON outbox_events (terminal_id, seq);

CREATE TABLE deliveries (
  seq bigserial UNIQUE,
  id uuid PRIMARY KEY,
  event_id uuid NOT NULL UNIQUE REFERENCES outbox_events(id),
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL CHECK (attempts BETWEEN 0 AND 8),
  next_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  delivered_at timestamptz
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, seq) WHERE status = 'pending';
CREATE INDEX deliveries_terminal ON deliveries (terminal_id, created_at DESC);

CREATE TABLE delivery_attempts (
  id uuid PRIMARY KEY,
  delivery_id uuid NOT NULL REFERENCES deliveries(id),
  attempt_number integer NOT NULL CHECK (attempt_number BETWEEN 1 AND 8),
  at timestamptz NOT NULL,
  url text NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  error text,
  UNIQUE (delivery_id, attempt_number)
);

CREATE TABLE nonces (
  api_key_id uuid NOT NULL,
  nonce text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (api_key_id, nonce)
);
CREATE INDEX nonces_expiry ON nonces (expires_at);

CREATE TABLE idempotency_records (
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  scope text NOT NULL CHECK (scope IN ('subscription', 'payout')),
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 128),
  fingerprint text NOT NULL,
  resource_id uuid NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (terminal_id, scope, key)
);
CREATE INDEX idempotency_records_created ON idempotency_records (created_at);

CREATE TABLE rates (
  scope text PRIMARY KEY,
  rate numeric(20, 6) NOT NULL CHECK (rate > 0),
  updated_at timestamptz NOT NULL
);
`)

/** Deliveries remember the stamp of an attempt in flight, so a re-send after a crash repeats it. */
const deliverySendingAt = script(`ALTER TABLE deliveries ADD COLUMN sending_at timestamptz`)

/** Open charge attempts (pending or unconfirmed) are found by age, to settle those of stopped subscriptions. */
const chargesOpen = script(`CREATE INDEX charges_open ON charges (updated_at) WHERE status IN ('pending', 'unconfirmed')`)

/**
 * Security hardening: the attempt log keeps the first KiB of a receiver's answer; a terminal keeps
 * its previous signing secret and the time of the last rotation (an overlap window can use them
 * later; today a rotation replaces the secret at once).
 */
const securityHardening = script(`
ALTER TABLE delivery_attempts ADD COLUMN response_body text;
ALTER TABLE terminals ADD COLUMN previous_signing_secret_encrypted text;
ALTER TABLE terminals ADD COLUMN signing_secret_rotated_at timestamptz
`)

/**
 * Events a merchant can rely on: each event's position among the events of its payment or payout
 * (existing events numbered in insertion order), `ping` test events, several deliveries per event
 * (the scheduled one, recoveries, resends), and the indexes of the events API.
 */
const events = script(`
ALTER TABLE outbox_events ADD COLUMN sequence integer;
UPDATE outbox_events e SET sequence = r.n
  FROM (SELECT id, row_number() OVER (PARTITION BY coalesce(payment_id, payout_id, id) ORDER BY seq) AS n FROM outbox_events) r
  WHERE r.id = e.id;
ALTER TABLE outbox_events ALTER COLUMN sequence SET NOT NULL;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_sequence_check CHECK (sequence >= 1);
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_event_type_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_event_type_check CHECK (event_type IN ('payment.created', 'payment.paid',
  'payment.canceled', 'payment.expired', 'payment.chargeback', 'payment.refunded', 'refund_request.completed', 'payout.completed', 'ping'));
CREATE INDEX outbox_events_payout ON outbox_events (payout_id) WHERE payout_id IS NOT NULL;
CREATE INDEX outbox_events_listing ON outbox_events (terminal_id, created_at DESC, sequence DESC, id DESC);
ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_key;
CREATE INDEX deliveries_event ON deliveries (event_id, seq);
ALTER TABLE deliveries ADD COLUMN kind text NOT NULL DEFAULT 'scheduled' CHECK (kind IN ('scheduled', 'recover', 'resend'));
CREATE INDEX delivery_attempts_at ON delivery_attempts (at DESC)
`)

/** Sandbox subscriptions: charged by the sandbox acquirer, never touching balances, listed apart. */
const sandboxSubscriptions = script(`
ALTER TABLE subscriptions ADD COLUMN environment text NOT NULL DEFAULT 'prod' CHECK (environment IN ('prod', 'sandbox'));
CREATE INDEX subscriptions_listing ON subscriptions (terminal_id, environment, created_at DESC)
`)

/**
 * Merchant conveniences: an `Idempotency-Key` header on payment creation (scope `payment`), and the
 * events feed (`GET /api/v1/events/feed`) reads a terminal's events after a cursor.
 */
const merchantConveniences = script(`
ALTER TABLE idempotency_records DROP CONSTRAINT idempotency_records_scope_check;
ALTER TABLE idempotency_records ADD CONSTRAINT idempotency_records_scope_check CHECK (scope IN ('subscription', 'payout', 'payment'))
`)

/**
 * Test clocks: the clocks of terminals, and the clock of each sandbox payment, subscription, event
 * and delivery attached to one (`NULL` for all others: the global claims take those only). Indexes
 * serve a clock's own claims and its "earliest due moment" queries, and the background worker's
 * claim of clocks that wait (an advance to continue, or work due at a clock's time).
 */
const testClocks = script(`
CREATE TABLE test_clocks (
  id uuid PRIMARY KEY,
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  name text,
  frozen_time timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('ready', 'advancing')),
  target_time timestamptz,
  lease_until timestamptz,
  work_due boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL,
  CHECK ((status = 'advancing') = (target_time IS NOT NULL))
);
CREATE INDEX test_clocks_terminal ON test_clocks (terminal_id, created_at DESC, id DESC);
CREATE INDEX test_clocks_pending ON test_clocks (updated_at) WHERE status = 'advancing' OR work_due;
ALTER TABLE payments ADD COLUMN test_clock_id uuid REFERENCES test_clocks(id);
ALTER TABLE payments ADD CONSTRAINT payments_test_clock_sandbox CHECK (test_clock_id IS NULL OR environment = 'sandbox');
ALTER TABLE subscriptions ADD COLUMN test_clock_id uuid REFERENCES test_clocks(id);
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_test_clock_sandbox CHECK (test_clock_id IS NULL OR environment = 'sandbox');
ALTER TABLE outbox_events ADD COLUMN test_clock_id uuid REFERENCES test_clocks(id);
ALTER TABLE deliveries ADD COLUMN test_clock_id uuid REFERENCES test_clocks(id);
CREATE INDEX payments_clock_expiry ON payments (test_clock_id, expires_at)
  WHERE test_clock_id IS NOT NULL AND status IN ('created', 'processing');
CREATE INDEX subscriptions_clock ON subscriptions (test_clock_id) WHERE test_clock_id IS NOT NULL;
CREATE INDEX outbox_events_clock ON outbox_events (test_clock_id) WHERE test_clock_id IS NOT NULL;
CREATE INDEX deliveries_clock_due ON deliveries (test_clock_id, next_attempt_at) WHERE status = 'pending' AND test_clock_id IS NOT NULL
`)

/**
 * The live passes' indexes without test clocks' objects. A clock keeps its objects' times on the
 * clock (years 2000 to 2099), and only its own passes take them: frozen in the past, its pending
 * deliveries, due subscriptions and open payments sorted first in these indexes, and every live
 * claim (and the lag gauge) walked past all of them, read each row and dropped it. The clocks'
 * subscription passes get ordered indexes of their own, as deliveries and payments have. Each
 * index also holds its claim's tie-breaker (`seq` or `id`): objects due at the same instant (a
 * clock's, or subscriptions charged at the same hour) were read and sorted all at once by each claim.
 *
 * The three tables are locked against writes first, together (reads go on), and the new indexes
 * built under new names. The old ones are dropped and the new renamed last, so the exclusive lock a
 * drop takes is held only from there to the commit.
 */
const liveDueIndexes = script(`
LOCK TABLE deliveries, subscriptions, payments IN SHARE MODE;
CREATE INDEX deliveries_due_0009 ON deliveries (next_attempt_at, seq) WHERE status = 'pending' AND test_clock_id IS NULL;
CREATE INDEX deliveries_clock_due_0009 ON deliveries (test_clock_id, next_attempt_at, seq) WHERE status = 'pending' AND test_clock_id IS NOT NULL;
CREATE INDEX subscriptions_due_0009 ON subscriptions (next_charge_at, id)
  WHERE provider_state = 'active' AND billing_status = 'enabled' AND test_clock_id IS NULL;
CREATE INDEX subscriptions_clock_due ON subscriptions (test_clock_id, next_charge_at, id)
  WHERE provider_state = 'active' AND billing_status = 'enabled' AND test_clock_id IS NOT NULL;
CREATE INDEX subscriptions_stop_pending_0009 ON subscriptions (updated_at, id) WHERE billing_status = 'stop_pending' AND test_clock_id IS NULL;
CREATE INDEX subscriptions_clock_stop_pending ON subscriptions (test_clock_id, updated_at, id)
  WHERE billing_status = 'stop_pending' AND test_clock_id IS NOT NULL;
CREATE INDEX payments_expiry_0009 ON payments (expires_at, id) WHERE status IN ('created', 'processing') AND test_clock_id IS NULL;
CREATE INDEX payments_clock_expiry_0009 ON payments (test_clock_id, expires_at, id)
  WHERE status IN ('created', 'processing') AND test_clock_id IS NOT NULL;
DROP INDEX deliveries_due;
ALTER INDEX deliveries_due_0009 RENAME TO deliveries_due;
DROP INDEX deliveries_clock_due;
ALTER INDEX deliveries_clock_due_0009 RENAME TO deliveries_clock_due;
DROP INDEX subscriptions_due;
ALTER INDEX subscriptions_due_0009 RENAME TO subscriptions_due;
DROP INDEX subscriptions_stop_pending;
ALTER INDEX subscriptions_stop_pending_0009 RENAME TO subscriptions_stop_pending;
DROP INDEX payments_expiry;
ALTER INDEX payments_expiry_0009 RENAME TO payments_expiry;
DROP INDEX payments_clock_expiry;
ALTER INDEX payments_clock_expiry_0009 RENAME TO payments_clock_expiry
`)

/**
 * The outbox's purge (`Work.housekeeping`, at the start of every pass of the local engine) looks for
 * events older than the retention, of no test clock. Without an index on `created_at` it read the
 * whole table each time to find none: 4.8 ms for 22,000 events, so seconds for the millions a
 * retention of weeks keeps. With this one it reads only the events it may purge.
 */
const outboxPurgeIndex = script(`
CREATE INDEX outbox_events_purge ON outbox_events (created_at) WHERE test_clock_id IS NULL
`)

/**
 * The housekeeping's purge of dashboard sessions a week after their refresh token expired
 * (`SessionRepository.purge`) reads them by expiry; a table of a row per sign-in and refresh.
 */
const sessionsExpiryIndex = script(`
CREATE INDEX sessions_expires ON sessions (expires_at)
`)

/**
 * Deleting test clocks (`TestClocks.remove`, and the retention's `TestClocks.purge`): `deleted_at`
 * (the clock is gone for reads; its objects are purged a lease later) and `deletes_after` (the
 * retention deletes it then; for the clocks that exist, 30 days from this migration or their
 * creation, whichever is later, so an upgrade deletes nobody's clock at once; the column's default,
 * 30 days from the insert, is for an older build still running beside the new one, whose inserts
 * do not name it). The purge reads a deleted clock's payments by clock, which only the open ones'
 * index did (`payments_clock`). Deleting payments and clocks, which nothing did before, makes
 * PostgreSQL check the foreign keys that point at them: `charges.payment_id` and
 * `deliveries.test_clock_id` had no index a check could use, so each deleted payment read the whole
 * `charges` table (7 ms a payment with 50,000 charges, found by a review) and each clock the whole
 * `deliveries` table (`charges_payment`, `deliveries_clock`). The builds read `payments` and
 * `charges` once each (seconds per million rows) and hold their writes meanwhile: run it in a quiet
 * minute. The housekeeping's two queries of every pass read the clocks to expire and the deleted ones
 * by their own partial indexes.
 */
const testClockDeletion = script(`
ALTER TABLE test_clocks ADD COLUMN deleted_at timestamptz;
ALTER TABLE test_clocks ADD COLUMN deletes_after timestamptz;
UPDATE test_clocks SET deletes_after = greatest(created_at, now()) + interval '30 days';
ALTER TABLE test_clocks ALTER COLUMN deletes_after SET DEFAULT now() + interval '30 days';
ALTER TABLE test_clocks ALTER COLUMN deletes_after SET NOT NULL;
CREATE INDEX test_clocks_expiry ON test_clocks (deletes_after) WHERE deleted_at IS NULL;
CREATE INDEX test_clocks_deleted ON test_clocks (deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX payments_clock ON payments (test_clock_id) WHERE test_clock_id IS NOT NULL;
CREATE INDEX charges_payment ON charges (payment_id) WHERE payment_id IS NOT NULL;
CREATE INDEX deliveries_clock ON deliveries (test_clock_id) WHERE test_clock_id IS NOT NULL
`)

/**
 * An `Idempotency-Key` on a signing-secret rotation (scope `rotation`): a retry after a lost answer
 * gets the same secret instead of a second rotation. `NOT VALID`: the rows there are of the older
 * scopes, so the check need not read the table (7 days of keys) under the exclusive lock that
 * changing a constraint takes; it holds for every row written from now on (a review).
 */
const rotationKeys = script(`
ALTER TABLE idempotency_records DROP CONSTRAINT idempotency_records_scope_check;
ALTER TABLE idempotency_records ADD CONSTRAINT idempotency_records_scope_check CHECK (scope IN ('subscription', 'payout', 'payment', 'rotation')) NOT VALID
`)

/**
 * An `Idempotency-Key` on an operator's move on a payment or payout (scope `operator`: refund,
 * chargeback, approve, reject): a retry after a lost answer answers the object instead of 409. `NOT
 * VALID` as `0013_rotation_keys`, for the same reason.
 */
const operatorKeys = script(`
ALTER TABLE idempotency_records DROP CONSTRAINT idempotency_records_scope_check;
ALTER TABLE idempotency_records ADD CONSTRAINT idempotency_records_scope_check CHECK (scope IN ('subscription', 'payout', 'payment', 'rotation', 'operator')) NOT VALID
`)

/**
 * When a subscription's review for a charge began (`subscriptions.review_since`): the catch-up a
 * resume ends still charges the cycles due before it. Nullable, no default: adding it rewrites
 * nothing, and a process of the earlier version goes on as before (it neither sets nor reads it, and
 * the schedule the new version writes is one it follows: see `SubscriptionLifecycle.afterPaidCharge`).
 */
const reviewSince = script(`
ALTER TABLE subscriptions ADD COLUMN review_since timestamptz
`)

/**
 * Clocks whose holder died (a ready clock with a lease that ran out) are claimed again
 * (`claimPending`), so the waiting clocks' index covers clocks with a lease too. The old index's
 * rows are a subset: a process of the earlier version, whose claim does not ask for them, uses the
 * new one as well.
 */
const testClocksPendingLease = script(`
CREATE INDEX test_clocks_waiting ON test_clocks (updated_at) WHERE status = 'advancing' OR work_due OR lease_until IS NOT NULL;
DROP INDEX test_clocks_pending
`)

/**
 * The operator's deliveries list, newest written first (`seq`), not by `created_at`: a test clock's
 * deliveries carry the clock's time, and a merchant's clock in 2099 put its sandbox deliveries ahead
 * of every real one (an outside probe). Its terminal filter reads this index; the one it replaces
 * served only that list (the endpoint health reads by terminal alone, which either serves).
 */
const deliveriesTerminalSeq = script(`
CREATE INDEX deliveries_terminal_seq ON deliveries (terminal_id, seq);
DROP INDEX deliveries_terminal
`)

/** The marker of the secret key the database's processes share (`PgStore.claimSecretKey`). */
const secretKeyMarker = script(`
CREATE TABLE secret_key_marker (
  id smallint PRIMARY KEY CHECK (id = 1),
  ciphertext text NOT NULL
)
`)

/** Every migration, by `<id>_<name>`. */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_initial": initial,
  "0002_delivery_sending_at": deliverySendingAt,
  "0003_charges_open": chargesOpen,
  "0004_security_hardening": securityHardening,
  "0005_events": events,
  "0006_sandbox_subscriptions": sandboxSubscriptions,
  "0007_merchant_conveniences": merchantConveniences,
  "0008_test_clocks": testClocks,
  "0009_live_due_indexes": liveDueIndexes,
  "0010_outbox_purge_index": outboxPurgeIndex,
  "0011_sessions_expiry_index": sessionsExpiryIndex,
  "0012_test_clock_deletion": testClockDeletion,
  "0013_rotation_keys": rotationKeys,
  "0014_operator_keys": operatorKeys,
  "0015_review_since": reviewSince,
  "0016_test_clocks_waiting": testClocksPendingLease,
  "0017_deliveries_terminal_seq": deliveriesTerminalSeq,
  "0018_secret_key_marker": secretKeyMarker
}
