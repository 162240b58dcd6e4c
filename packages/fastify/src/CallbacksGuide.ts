/**
 * The "Callbacks" guide of the API reference (Markdown, rendered by the docs page from the
 * document's description): headers, the signature check in TypeScript, Python and PHP, retries
 * and what to answer, event ids and order, the events API (resend, recover, ping) and signing-secret
 * rotation. `docs/guides/callbacks.md` is the longer form of the same guide.
 */
import { Callback } from "@paydesk/core"

const retries = Array.from({ length: Callback.maxAttempts - 1 }, (_, i) => {
  const seconds = (Callback.retryDelayMs(i + 1) ?? 0) / 1000
  return `| ${i + 1} | ${seconds < 60 ? `${seconds} s` : `${seconds / 60} min`} |`
}).join("\n")

/** The guide as Markdown. */
export const markdown = `## Callbacks

On every payment and payout event the service sends an HTTP \`POST\` with a JSON body to the terminal's \`callback_url\`
(the events are listed under **Webhooks**). Sandbox payments send them too, with \`"test": true\`.

### Headers

| Header | Meaning |
|---|---|
| \`X-Signature\` | lowercase hex HMAC-SHA256 of \`X-Timestamp + "." + raw body\` with the terminal's \`signing_secret\` (during a rotation's overlap: the previous secret) |
| \`X-Timestamp\` | Unix time (seconds) of the attempt |
| \`X-Test-Mode\` | \`true\` on callbacks of sandbox payments |
| \`X-Event-Id\` | \`evt_<uuid>\`, the same on every retry, resend and recovery: deduplicate on it |
| \`X-Event-Sequence\` | position among the events of the same payment or payout, from 1: ignore an event older than one you applied |
| \`X-Signature-Next\` | only during a rotation's overlap: the same HMAC with the new secret |
| \`X-Test-Clock\` | the test clock of a sandbox object (\`X-Timestamp\` is the wall time of sending, as on any callback) |
| \`X-Test-Clock-Time\` | beside \`X-Test-Clock\`: the clock's time of the attempt (Unix seconds); not signed |
| \`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\` | [Standard Webhooks](https://www.standardwebhooks.com): \`v1,<base64>\` over \`id.timestamp.body\` keyed with the \`whsec_\` form of the secret (\`signing_secret_whsec\`); during an overlap two signatures, space-separated |

Verify the signature **over the exact bytes received** (never a re-serialized body), compare in constant time,
and refuse timestamps older than a few minutes (300 s is our SDK's default) before trusting anything in the body.

### TypeScript (\`@paydesk/client\`)

\`\`\`ts
import { webhooks } from "@paydesk/client"

// rawBody: the request body as received (string or bytes), headers: the request's headers
const event = await webhooks.verify(rawBody, headers, process.env.PAYDESK_SIGNING_SECRET!, { toleranceSeconds: 300 })
if (event.event_type === "payment.paid") {
  // mark the order paid, once per payment_id
}
\`\`\`

### Python

\`\`\`python
import hashlib, hmac, re, time

def verify(raw_body: bytes, headers, secrets, tolerance: int = 300) -> bool:
    # headers: http.server's self.headers or a dict, any letter case; secrets: the signing_secret,
    # or [previous, new] during a rotation. Missing or malformed headers: False (reject), never an exception.
    h = {str(k).lower(): str(v).strip() for k, v in headers.items()}
    timestamp = h.get("x-timestamp", "")
    if not re.fullmatch(r"[0-9]{1,12}", timestamp) or abs(time.time() - int(timestamp)) > tolerance:
        return False
    signed = timestamp.encode() + b"." + raw_body
    keys = [k for k in ([secrets] if isinstance(secrets, str) else secrets) if k]  # an unset one (None, "") is left out
    expected = [hmac.new(key.encode(), signed, hashlib.sha256).hexdigest() for key in keys]
    received = [h.get("x-signature", "").lower(), h.get("x-signature-next", "").lower()]
    return any(re.fullmatch(r"[0-9a-f]{64}", r) and hmac.compare_digest(e, r) for e in expected for r in received)
\`\`\`

### PHP

\`\`\`php
function paydesk_verify(string $rawBody, string $timestamp, string $signature, string $secret, int $tolerance = 300): bool {
    $expected = hash_hmac('sha256', $timestamp . '.' . $rawBody, $secret);
    return abs(time() - (int) $timestamp) <= $tolerance && hash_equals($expected, $signature);
}
// paydesk_verify(file_get_contents('php://input'), $_SERVER['HTTP_X_TIMESTAMP'] ?? '', $_SERVER['HTTP_X_SIGNATURE'] ?? '', $secret)
\`\`\`

### What to answer

Answer any **2xx within ${Callback.timeoutMs / 1000} seconds**; do slow work after answering. Answer 2xx also for an event you
have already processed (deliveries can repeat), and grant goods once per \`payment_id\`, recording the processing and the
access change atomically. Reject (4xx) a callback whose signature does not verify. Subscription charges arrive as
ordinary \`payment.paid\` events; read \`GET /api/v1/payments/{payment_id}\` for \`subscription_id\`.

### Retries

Anything but a 2xx in time is retried, at most ${Callback.maxAttempts} attempts in all; the last about an hour after the first:

| Failed attempt | Next attempt after |
|---|---|
${retries}
| ${Callback.maxAttempts} | no more retries; delivery marked failed |

Each attempt carries a fresh \`X-Timestamp\` and signature over the same body (and the same \`X-Event-Id\`).

### Events: resend, recover, ping

\`GET /api/v1/events\` lists the terminal's events (filters \`type\`, \`object_id\`, created range, \`delivery_status\`; cursor
pages; kept 30 days) and \`GET /api/v1/events/{eventID}\` shows one with every delivery attempt (status, latency, error,
the first 1 KiB of your answer). \`POST /api/v1/events/{eventID}/resend\` makes one attempt now, outside the ${Callback.maxAttempts};
after an outage \`POST /api/v1/events/recover\` \`{ "since": "<ISO time>" }\` queues every event whose delivery failed since
then once more, in order, with the same ids. \`POST /api/v1/terminals/{terminalID}/test-event\` sends a \`ping\` event
to check your endpoint and its signature check; the terminal shows the endpoint \`healthy\` or \`failing\`. Resends and
pings are for a few events at a time (30 a minute together per terminal, then 429 with \`Retry-After\`); to deliver many
again, use \`recover\`.

### Rotating the signing secret

\`POST /api/v1/terminals/{terminalID}/signing-secret/rotate\` (the owner's Bearer token) answers the new secret once, also
as \`whsec_…\`. For an overlap (24 h by default) \`X-Signature\` **keeps the previous secret**, so a receiver that checks only
\`X-Signature\` never rejects a genuine callback, and \`X-Signature-Next\` carries the new one (Standard Webhooks: both).
Switch over: (1) deploy a verifier that accepts either secret (\`webhooks.verify(body, headers, [previous, next])\`, or check
\`X-Signature\` with the previous and \`X-Signature-Next\` with the new one); (2) call
\`POST …/signing-secret/retire-previous\` (or let the overlap end): from then on \`X-Signature\` is the new secret's;
(3) drop the previous secret. Do not check \`X-Signature\` against the new secret alone before step 2: during the overlap
it is still the previous secret's.

### During development

\`paydesk listen --forward-to http://localhost:3000/webhooks\` reads the terminal's events feed
(\`GET /api/v1/events/feed\`, signed at read time) and forwards each one with its headers to your machine.
`
