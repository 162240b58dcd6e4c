/**
 * What the readiness check (unauthenticated: `/health/ready`) may say of a failure: the error's code
 * (`ECONNREFUSED`, `ENOTFOUND`, a SQLSTATE such as `57P01`), never the driver's text, which names the
 * database's host and port (an outside probe). The log has the whole cause.
 */

/** The failure as the readiness check says it: `<what>`, with the code when the text has one. */
export const failure = (what: string, text: string): string => {
  const code = /\b(E[A-Z]{4,}|[0-9]{2}[0-9A-Z]{3})\b/.exec(text)?.[1]
  return `${what}${code === undefined ? "" : ` (${code})`}; the cause is in the server's log`
}
