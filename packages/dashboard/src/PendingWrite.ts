/**
 * The Idempotency-Key of a write whose outcome is not known yet, kept in the tab (`sessionStorage`,
 * so a reload keeps it): pressing the button again after a failure that may have done the write (no
 * answer, a 5xx) repeats it under the same key, and the server answers what the first press did
 * instead of doing it a second time. One slot per kind of write (`slot`); `request` says which write
 * the key is for (a payout's body, a rotation's terminal): another request gets a new key.
 */

/** The key for `request` in `slot`: the one kept there for the same request, else a new one, kept. */
export const pendingKey = (slot: string, request: string): string => {
  try {
    const kept = JSON.parse(sessionStorage.getItem(slot) ?? "null") as { readonly body?: unknown; readonly key?: unknown } | null
    if (kept !== null && kept.body === request && typeof kept.key === "string") return kept.key
  } catch {
    // Not ours, or damaged: a new key.
  }
  const key = globalThis.crypto.randomUUID()
  sessionStorage.setItem(slot, JSON.stringify({ body: request, key }))
  return key
}

/** The write's outcome is known (an answer): the next press is a new write. */
export const settled = (slot: string): void => sessionStorage.removeItem(slot)
