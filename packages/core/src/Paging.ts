/**
 * Paging of the merchant lists: the spec's `page` (50 records a page) and, beside it, a `limit`
 * with an opaque `cursor` (the position of the last record returned, see docs/decisions.md).
 *
 * Lists are newest first (`createdAt` descending, then id descending). A cursor is a keyset
 * position: the next page holds the records that come after the last one returned in that order
 * and still match the filter, however records changed or came in meanwhile. So a record that
 * matched the filter throughout a walk is listed once, never skipped nor repeated; one inserted
 * meanwhile is newer than the position and is not in the later pages. The cursor also carries
 * how many records came before it, only to number the `page` of the answer.
 *
 * A cursor of the earlier offset form (`o:<offset>`) still reads from that offset once; the
 * answer's `next_cursor` is a keyset one.
 */
import { Effect } from "effect"
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "./Bytes.js"
import { InvalidRequest } from "./Errors.js"
import { isUuid } from "./Id.js"

/** Largest `limit`. */
export const maxLimit = 100

/** What a list request asks for; `page` and `cursor` exclude each other. */
export interface Request {
  readonly page?: number | null | undefined
  readonly limit?: number | null | undefined
  readonly cursor?: string | null | undefined
}

/** A record's place in a list: its `createdAt` (epoch ms) and id. */
export interface Position {
  readonly createdAt: number
  readonly id: string
}

/**
 * A page of a list as a repository reads it: `limit` records after `offset` skipped, from the
 * newest or, with `after` (a keyset cursor), from the first record after that position.
 */
export interface ListPage {
  readonly limit: number
  readonly offset: number
  readonly after?: Position | null | undefined
}

/** The window to read, and the page number it corresponds to. */
export interface Window {
  readonly limit: number
  /** Records of the list to skip (counted after `after` when it is set). */
  readonly offset: number
  /** The position the window starts after (a cursor's), or null: from the newest record. */
  readonly after: Position | null
  /** Records listed before the window (as the walk counted them), to number the pages. */
  readonly start: number
  readonly page: number
}

const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/** The cursor of a position, `start` records into the list. */
export const encodeCursor = (position: Position, start: number): string =>
  toBase64Url(utf8(`${position.createdAt}.${position.id}.${start}`))

type Decoded =
  | { readonly _tag: "Keyset"; readonly after: Position; readonly start: number }
  | { readonly _tag: "Offset"; readonly offset: number }

const decodeKeyset = (cursor: string): Decoded | null => {
  const bytes = fromBase64Url(cursor)
  const text = bytes === undefined ? undefined : fromUtf8(bytes)
  const match = text === undefined ? null : /^(\d{1,15})\.([0-9a-f-]{36})\.(\d{1,12})$/.exec(text)
  if (match === null || !isUuid(match[2]!)) return null
  return { _tag: "Keyset", after: { createdAt: Number(match[1]), id: match[2]! }, start: Number(match[3]) }
}

/** A cursor of the earlier offset form (`o:<offset>`, padless base64). */
const decodeOffset = (cursor: string): Decoded | null => {
  try {
    const match = /^o:(\d{1,9})$/.exec(atob(cursor))
    return match === null ? null : { _tag: "Offset", offset: Number(match[1]) }
  } catch {
    return null
  }
}

const decodeCursor = (cursor: string): Decoded | null => decodeKeyset(cursor) ?? decodeOffset(cursor)

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
      const decoded = decodeCursor(cursor)
      if (decoded === null) return yield* invalid("cursor", "cursor must be the next_cursor of a previous answer")
      return decoded._tag === "Keyset"
        ? { limit, offset: 0, after: decoded.after, start: decoded.start, page: Math.floor(decoded.start / limit) + 1 }
        : { limit, offset: decoded.offset, after: null, start: decoded.offset, page: Math.floor(decoded.offset / limit) + 1 }
    }
    const n = page ?? 1
    if (!Number.isInteger(n) || n < 1) return yield* invalid("page", "page must be an integer of at least 1")
    return { limit, offset: (n - 1) * limit, after: null, start: (n - 1) * limit, page: n }
  })

/**
 * What to ask the repository for: the window and one record more, which tells whether any comes
 * after it (see `answer`).
 */
export const read = (window: Window): ListPage => ({
  limit: window.limit + 1,
  offset: window.offset,
  after: window.after
})

/**
 * The window's records out of the rows `read` asked for, and the cursor of the next window: the
 * position of the last record, or null when no record comes after it.
 */
export const answer = <A extends Position>(
  window: Window,
  rows: ReadonlyArray<A>
): { readonly items: ReadonlyArray<A>; readonly nextCursor: string | null } => {
  const items = rows.slice(0, window.limit)
  const last = items.at(-1)
  return { items, nextCursor: rows.length > window.limit && last !== undefined ? encodeCursor(last, window.start + items.length) : null }
}
