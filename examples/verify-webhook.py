#!/usr/bin/env python3
"""Verify Paydesk callbacks in Python (standard library only).

X-Signature is the lowercase hex HMAC-SHA256 of X-Timestamp + "." + the raw body, keyed with the
terminal's signing_secret. Verify over the exact bytes received, compare in constant time, and
refuse old timestamps.

    # check one body: prints the event, exit 0; or the reason, exit 1
    python3 verify-webhook.py check --secret "$SECRET" --timestamp 1772357472 --signature 5d41... < body.json

    # a receiver for `paydesk listen --forward-to http://127.0.0.1:3000/webhooks`
    python3 verify-webhook.py serve --secret "$SECRET" --port 3000
"""
import argparse
import hashlib
import hmac
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

TOLERANCE_SECONDS = 300


class VerificationError(Exception):
    pass


def verify(raw_body: bytes, timestamp: str, signature: str, secret: str, tolerance: int = TOLERANCE_SECONDS, now=None) -> dict:
    """Returns the event of a callback, or raises VerificationError."""
    if not timestamp or not signature:
        raise VerificationError("missing_header")
    if not timestamp.isdigit():
        raise VerificationError("malformed_signature")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance:
        raise VerificationError("timestamp_out_of_tolerance")
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature.strip().lower()):
        raise VerificationError("signature_mismatch")
    try:
        event = json.loads(raw_body)
    except ValueError:
        raise VerificationError("malformed_body")
    if not isinstance(event, dict) or "event_type" not in event:
        raise VerificationError("malformed_body")
    return event


def serve(secret: str, port: int) -> None:
    processed = set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                event = verify(body, self.headers.get("X-Timestamp", ""), self.headers.get("X-Signature", ""), secret)
            except VerificationError as error:
                self.send_response(400)
                self.end_headers()
                self.wfile.write(str(error).encode())
                return
            # Answer 2xx within 10 s, for repeats too; act once per payment_id.
            key = (event.get("payment_id") or event.get("payout_id"), event["event_type"])
            if key not in processed:
                processed.add(key)
                print(f"verified {event['event_type']} {key[0]}", flush=True)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on http://127.0.0.1:{port}/webhooks", flush=True)
    server.serve_forever()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check")
    check.add_argument("--secret", required=True)
    check.add_argument("--timestamp", required=True)
    check.add_argument("--signature", required=True)
    check.add_argument("--now", type=float)
    receive = commands.add_parser("serve")
    receive.add_argument("--secret", required=True)
    receive.add_argument("--port", type=int, default=3000)
    args = parser.parse_args()
    if args.command == "serve":
        serve(args.secret, args.port)
        return 0
    try:
        event = verify(sys.stdin.buffer.read(), args.timestamp, args.signature, args.secret, now=args.now)
    except VerificationError as error:
        print(f"rejected: {error}")
        return 1
    print(json.dumps(event))
    return 0


if __name__ == "__main__":
    sys.exit(main())
