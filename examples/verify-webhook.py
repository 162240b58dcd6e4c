#!/usr/bin/env python3
"""Verify Paydesk callbacks in Python (standard library only).

X-Signature is the lowercase hex HMAC-SHA256 of X-Timestamp + "." + the raw body, keyed with the
terminal's signing_secret. Verify over the exact bytes received, compare in constant time, and
refuse old timestamps. Deliveries can repeat: deduplicate on X-Event-Id.

    # check one body: prints the event, exit 0; or the reason, exit 1
    python3 verify-webhook.py check --secret "$SECRET" --timestamp 1772357472 --signature 5d41... < body.json

    # a receiver for `paydesk listen --forward-to http://127.0.0.1:3000/webhooks`
    python3 verify-webhook.py serve --secret "$SECRET" --port 3000

Rotating the signing secret: give both secrets while you switch over (repeat --secret, or separate
them with commas; without --secret, PAYDESK_SIGNING_SECRET is read, commas alike). A callback is
genuine when X-Signature or X-Signature-Next matches one of them: X-Signature stays the previous
secret's during the overlap, X-Signature-Next is the new one's.

    python3 verify-webhook.py serve --secret "$PREVIOUS" --secret "$NEW" --port 3000
    PAYDESK_SIGNING_SECRET="$PREVIOUS,$NEW" python3 verify-webhook.py serve --port 3000
"""
import argparse
import hashlib
import hmac
import json
import os
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

TOLERANCE_SECONDS = 300
# Callbacks are small; a larger body is refused before it is read.
MAX_BODY_BYTES = 1024 * 1024


class VerificationError(Exception):
    """str() is the reason (the SDK's WebhookVerificationError reasons); detail says more."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


def secrets_of(values) -> list:
    """The secrets of a --secret value (or several) or of PAYDESK_SIGNING_SECRET: comma-separated, blanks skipped."""
    if isinstance(values, str):
        values = [values]
    return [s.strip() for value in values or [] for s in (value or "").split(",") if s.strip()]


def verify(raw_body: bytes, timestamp, signature, secret, tolerance: int = TOLERANCE_SECONDS, now=None, signature_next=None) -> dict:
    """Returns the event of a callback, or raises VerificationError (never anything else).

    timestamp, signature, signature_next: the X-Timestamp, X-Signature and X-Signature-Next values as
    received (None or "" when absent). secret: the signing secret, or a list of them (the previous
    and the new one during a rotation)."""
    secrets = secrets_of(secret)
    if not secrets:
        raise VerificationError("no_secret", "no signing secret given")
    timestamp = str(timestamp or "").strip()
    signature = str(signature or "").strip().lower()
    signature_next = str(signature_next or "").strip().lower()
    if not timestamp or not signature:
        raise VerificationError("missing_header", "X-Timestamp and X-Signature are required")
    if not re.fullmatch(r"[0-9]{1,12}", timestamp):
        raise VerificationError("malformed_signature", "X-Timestamp is not Unix seconds")
    if not re.fullmatch(r"[0-9a-f]{64}", signature):
        raise VerificationError("malformed_signature", "X-Signature is not 64 hex characters")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance:
        raise VerificationError("timestamp_out_of_tolerance", f"X-Timestamp is more than {tolerance} s away from now")
    signed = timestamp.encode() + b"." + raw_body
    candidates = [signature] + ([signature_next] if re.fullmatch(r"[0-9a-f]{64}", signature_next) else [])
    expected = [hmac.new(key.encode(), signed, hashlib.sha256).hexdigest() for key in secrets]
    # Every pair is compared (no early exit), each in constant time.
    matches = [hmac.compare_digest(e, c) for e in expected for c in candidates]
    if not any(matches):
        headers = "X-Signature or X-Signature-Next" if len(candidates) > 1 else "X-Signature"
        raise VerificationError("signature_mismatch", f"{headers} matches none of the {len(secrets)} secret(s) (wrong secret, or a changed body)")
    try:
        event = json.loads(raw_body)
    except (ValueError, RecursionError):
        # RecursionError: JSON nested deeper than Python's stack (signed, so only with the secret).
        raise VerificationError("malformed_body", "the body is not JSON")
    if not isinstance(event, dict) or not isinstance(event.get("event_type"), str):
        raise VerificationError("malformed_body", "the body is not a callback event")
    return event


def serve(secret, port: int) -> None:
    secrets = secrets_of(secret)
    processed = set()

    class Handler(BaseHTTPRequestHandler):
        def answer(self, status: int, text: str = "") -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(text.encode())))
            self.end_headers()
            self.wfile.write(text.encode())

        def body(self) -> bytes:
            """The request's body: by Content-Length, or chunked (a proxy may re-chunk a delivery)."""
            if (self.headers.get("Transfer-Encoding") or "").strip().lower() == "chunked":
                chunks = []
                size = 0
                while True:
                    line = self.rfile.readline(1024).split(b";", 1)[0].strip()
                    if not re.fullmatch(rb"[0-9a-fA-F]{1,8}", line):
                        raise VerificationError("malformed_body", "a chunk size is not hexadecimal")
                    length = int(line, 16)
                    size += length
                    if size > MAX_BODY_BYTES:
                        raise VerificationError("malformed_body", f"the body is larger than {MAX_BODY_BYTES} bytes")
                    if length == 0:
                        # The trailer section, up to its empty line.
                        while self.rfile.readline(1024).strip():
                            pass
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(length))
                    self.rfile.readline(1024)
            length = self.headers.get("Content-Length") or "0"
            if not length.isascii() or not length.isdigit():
                raise VerificationError("malformed_body", "Content-Length is not a number")
            if int(length) > MAX_BODY_BYTES:
                raise VerificationError("malformed_body", f"the body is larger than {MAX_BODY_BYTES} bytes")
            return self.rfile.read(int(length))

        def do_POST(self):
            event_id = (self.headers.get("X-Event-Id") or "").strip()
            try:
                body = self.body()
                event = verify(body, self.headers.get("X-Timestamp"), self.headers.get("X-Signature"), secrets,
                               signature_next=self.headers.get("X-Signature-Next"))
            except VerificationError as error:
                # One line per rejection, saying why (no secret, no signature).
                print(f"rejected {event_id or '(no X-Event-Id)'}: {error.reason} ({error.detail})", flush=True)
                self.answer(400, error.reason)
                return
            # Answer 2xx within 10 s, for repeats too. A delivery can repeat (a retry, a resend, a
            # recovery): its X-Event-Id stays the same, so act once per event id. Grant goods once
            # per payment_id (a store would record both in the same transaction as the grant).
            subject = event.get("payment_id") or event.get("payout_id") or event.get("terminal_id") or ""
            if event_id and event_id in processed:
                print(f"repeat {event['event_type']} {subject} {event_id}: already processed", flush=True)
            else:
                if event_id:
                    processed.add(event_id)
                print(f"verified {event['event_type']} {subject} {event_id or '(no X-Event-Id)'}", flush=True)
            self.answer(200)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/webhooks ({len(secrets)} secret(s))", flush=True)
    server.serve_forever()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    secret_help = "a signing secret; repeat it or separate with commas to accept several (default: PAYDESK_SIGNING_SECRET)"
    check = commands.add_parser("check")
    check.add_argument("--secret", action="append", help=secret_help)
    check.add_argument("--timestamp", required=True)
    check.add_argument("--signature", required=True)
    check.add_argument("--signature-next", default="", help="X-Signature-Next, during a rotation")
    check.add_argument("--now", type=float)
    receive = commands.add_parser("serve")
    receive.add_argument("--secret", action="append", help=secret_help)
    receive.add_argument("--port", type=int, default=3000)
    args = parser.parse_args()
    secrets = secrets_of(args.secret if args.secret else os.environ.get("PAYDESK_SIGNING_SECRET", ""))
    if not secrets:
        parser.error("no signing secret: pass --secret (or set PAYDESK_SIGNING_SECRET)")
    if args.command == "serve":
        serve(secrets, args.port)
        return 0
    try:
        event = verify(sys.stdin.buffer.read(), args.timestamp, args.signature, secrets, now=args.now, signature_next=args.signature_next)
    except VerificationError as error:
        print(f"rejected: {error}")
        return 1
    print(json.dumps(event))
    return 0


if __name__ == "__main__":
    sys.exit(main())
