/**
 * Paging of the merchant lists: the spec's `page` (50 records a page) and, beside it, a `limit`
 * with an opaque `cursor` (the position after the last record returned, see docs/decisions.md).
 *
 * Lists are newest first and records are never deleted, so a record inserted while a client walks
 * the cursors only shifts older ones down: a later page may repeat a record, never skip one (the
 * SDK's iterators drop repeats by id).
 */
import { Effect } from "effect"
import { InvalidRequest } from "./Errors.js"

/** Largest `limit`. */
export const maxLimit = 100

/** What a list request asks for; `page` and `cursor` exclude each other. */
export interface Request {
  readonly page?: number | null | undefined
  readonly limit?: number | null | undefined
  readonly cursor?: string | null | undefined
}

/** The window to read, and the page number it corresponds to. */
export interface Window {
  readonly limit: number
  readonly offset: number
  readonly page: number
}

const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/** The cursor of a position. */
export const encodeCursor = (offset: number): string => btoa(`o:${offset}`).replace(/=+$/, "")

const decodeCursor = (cursor: string): number | null => {
  try {
    const match = /^o:(\d{1,9})$/.exec(atob(cursor))
    return match === null ? null : Number(match[1])
  } catch {
    return null
  }
}

/** Resolves a request to a window; `pageSize` is the list's page size. */
export const resolve = (request: Request, pageSize: number): Effect.Effect<Window, InvalidRequest> =>
  Effect.gen(function*() {
    const limit = request.limit ?? pageSize
    if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) {
      return yield* invalid("limit", `limit must be an integer from 1 to ${maxLimit}`)
    }
    const cursor = request.cursor ?? null
    const page = request.page ?? null
    if (cursor !== null && page !== null) return yield* invalid("cursor", "cursor and page cannot be used together: send one of them")
    if (cursor !== null) {
      const offset = decodeCursor(cursor)
      if (offset === null) return yield* invalid("cursor", "cursor must be the next_cursor of a previous answer")
      return { limit, offset, page: Math.floor(offset / limit) + 1 }
    }
    const n = page ?? 1
    if (!Number.isInteger(n) || n < 1) return yield* invalid("page", "page must be an integer of at least 1")
    return { limit, offset: (n - 1) * limit, page: n }
  })

/** The cursor of the next window, or null when `total` records end within this one. */
export const next = (window: Window, total: number): string | null =>
  window.offset + window.limit < total ? encodeCursor(window.offset + window.limit) : null
