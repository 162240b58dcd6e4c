/**
 * An emulator's book (the bank's or the payout network's memory, in PostgreSQL) could not be read
 * or written: its database is unreachable. The emulator then answers as a real counterpart that
 * does not answer would (`Unknown`, or `ProviderUnavailable`), never as a defect of the caller.
 */
import { Data } from "effect"

/** The book could not be read or written (its database is unreachable). */
export class BookUnavailable extends Data.TaggedError("BookUnavailable")<{ readonly cause: unknown }> {}
