/**
 * The Idempotency-Key of a write whose outcome is not known yet, kept in the tab (`sessionStorage`,
 * so a reload keeps it): pressing the button again after a failure that may have done the write (no
 * answer, a 5xx) repeats it under the same key, and the server answers what the first press did
 * instead of doing it a second time. One slot per kind of write and terminal (`slot`, made by
 * `slotOf`: a write on another terminal meanwhile must not take the first one's key away, or the
 * first one pressed again on its terminal would be made twice: a review); `request` says which write
 * the key is for (a payout's body): another request on that terminal gets a new key.
 */
import { judgesRequest, PaydeskApiError } from "@paydesk/client"

/** The slot of a kind of write (`paydesk.pendingPayout`) on one terminal. */
export const slotOf = (kind: string, terminalId: string): string => `${kind}:${terminalId}`

/**
 * Whether an error of the write settles it: an answer that judged the request itself (the SDK's
 * `judgesRequest`), or a 404 (what it names is gone), as the same request under the same key would
 * be answered again. Not one that refused that attempt only (401, 403, 408, 429, a 409
 * `write_conflict`, a session that had ended, no answer): the earlier press whose answer was lost
 * may still have done it.
 */
export const settles = (error: unknown): boolean =>
  judgesRequest(error) || (error instanceof PaydeskApiError && error.status === 404)

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
