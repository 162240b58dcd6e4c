/**
 * The "Callbacks" guide of the API reference (Markdown, rendered by the docs page from the
 * document's description): headers, the signature check in TypeScript, Python and PHP, retries
 * and what to answer. `docs/guides/callbacks.md` is the longer form of the same guide.
 */
import { Callback } from "@paydesk/core"

const retries = Array.from({ length: Callback.maxAttempts - 1 }, (_, i) => {
  const seconds = (Callback.retryDelayMs(i + 1) ?? 0) / 1000
  return `| ${i + 1} | ${seconds < 60 ? `${seconds} s` : `${seconds / 60} min`} |`
}).join("\n")

/** The guide as Markdown. */
export const markdown = `## Callbacks

On every payment event the service sends an HTTP \`POST\` with a JSON body to the terminal's \`callback_url\`
(the events are listed under **Webhooks**). Sandbox payments send them too, with \`"test": true\`.

### Headers

| Header | Meaning |
|---|---|
| \`X-Signature\` | lowercase hex HMAC-SHA256 of \`X-Timestamp + "." + raw body\` with the terminal's \`signing_secret\` |
| \`X-Timestamp\` | Unix time (seconds) of the attempt |
| \`X-Test-Mode\` | \`true\` on callbacks of sandbox payments |

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
import hashlib, hmac, time

def verify(raw_body: bytes, headers, secret: str, tolerance=300) -> bool:
    timestamp = headers["X-Timestamp"]
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    fresh = abs(time.time() - int(timestamp)) <= tolerance
    return fresh and hmac.compare_digest(expected, headers["X-Signature"])
\`\`\`

### PHP

\`\`\`php
function paydesk_verify(string $rawBody, string $timestamp, string $signature, string $secret, int $tolerance = 300): bool {
    $expected = hash_hmac('sha256', $timestamp . '.' . $rawBody, $secret);
    return abs(time() - (int) $timestamp) <= $tolerance && hash_equals($expected, $signature);
}
// $rawBody = file_get_contents('php://input');
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

Each attempt carries a fresh \`X-Timestamp\` and signature over the same body. During development,
\`paydesk listen --forward-to http://localhost:3000/webhooks\` forwards a terminal's events to your machine.
`
