/**
 * The statements one sandbox payment creation makes on the server, as a pgbench script (the
 * baseline of bench:http and bench:payments), one creation per transaction: the authentication
 * (the API key with its nonce claim and terminal; PgIdentity.authenticate) and the payment with its
 * `payment.created` and delivery in one data-modifying statement (PgPaymentRepository.insertCreated),
 * each as the server sends it for a batch of one (the rows as literals instead of a JSON parameter).
 * The server commits concurrent creations together (group commit); pgbench commits each alone.
 * Counted with `log_statement = all`; keep in step with the adapters.
 * pgbench 15 has no quoted variables, so ids are derived from the client and a random number with md5.
 */
export const creationScript = (options: {
  readonly terminalId: string
  /**
   * With the API key's hash: the authentication statement, which also reads the terminal (the HTTP
   * path); without: the terminal read of a use case called with a principal authenticated before.
   */
  readonly apiKeyHash?: string
  readonly description: string
}): string => {
  const { terminalId, apiKeyHash } = options
  const order = `'pgb-' || :client_id || '-' || :n`
  const paymentId = `md5('p' || ${order})::uuid`
  const eventId = `md5('e' || ${order})::uuid`
  const authenticate = apiKeyHash === undefined ? `SELECT * FROM terminals WHERE id = '${terminalId}';
` : `WITH k AS (SELECT * FROM api_keys WHERE key_hash = '${apiKeyHash}'),
  n AS (
    INSERT INTO nonces (api_key_id, nonce, expires_at)
    SELECT k.id, ${order}, now() + interval '10 minutes' FROM k WHERE k.revoked_at IS NULL
    ON CONFLICT (api_key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE nonces.expires_at <= now()
    RETURNING 1
  )
SELECT t.*, k.id AS k_id, k.terminal_id AS k_terminal_id, k.key_hash AS k_key_hash, k.prefix AS k_prefix,
  k.subscription_write AS k_subscription_write, k.created_at AS k_created_at, k.revoked_at AS k_revoked_at,
  EXISTS (SELECT 1 FROM n) AS k_claimed
FROM k LEFT JOIN terminals t ON t.id = k.terminal_id;
`
  return `\\set n random(1, 1000000000000)
${authenticate}WITH p AS (
  INSERT INTO payments (id, terminal_id, order_id, amount, currency, description, metadata, payment_method, environment, test_clock_id, status,
    pay_token, csrf_token, subscription_id, fingerprint, qr_payload, expires_at, created_at, updated_at, paid_at, version)
  VALUES (${paymentId}, '${terminalId}', ${order}, 1000.50, 'RUB', '${options.description}', NULL, 'sbp_test', 'sandbox', NULL, 'created',
    md5(random()::text) || :n, md5(random()::text), NULL, md5(random()::text), 'sandbox-qr', now() + interval '30 minutes', now(), now(), NULL, 1)
  ON CONFLICT DO NOTHING
  RETURNING id
), e AS (
  INSERT INTO outbox_events (id, terminal_id, event_type, payment_id, payout_id, body, test, test_clock_id, sequence, created_at)
  SELECT ${eventId}, '${terminalId}', 'payment.created', ${paymentId}, NULL,
    '{"event_type":"payment.created","payment_id":"pay_' || ${paymentId} || '","order_id":"' || ${order} || '","status":"created","amount":"1000.50","currency":"RUB"}', true, NULL, 1, now()
  WHERE ${paymentId} IN (SELECT id FROM p)
  RETURNING id
), d AS (
  INSERT INTO deliveries (id, event_id, terminal_id, kind, test_clock_id, status, attempts, next_attempt_at, sending_at, last_status_code, last_error, created_at, updated_at, delivered_at)
  SELECT gen_random_uuid(), ${eventId}, '${terminalId}', 'scheduled', NULL, 'pending', 0, now(), NULL, NULL, NULL, now(), now(), NULL
  WHERE ${eventId} IN (SELECT id FROM e)
)
SELECT id FROM p;
`
}
