/**
 * Port: accounts and their dashboard users.
 *
 * Contract: e-mails are unique case-insensitively (stored lowercased); `insertUser` fails
 * with `WriteConflict` on a duplicate e-mail. Lookups return `Option.none()` for unknown ids.
 * `listAccounts` returns accounts newest first (`createdAt` desc, then id) with the total count.
 */
import { Context, type Effect, type Option } from "effect"
import type { WriteConflict } from "../Errors.js"
import type { Account, User } from "../Terminal.js"

export class AccountRepository extends Context.Service<AccountRepository, {
  insertAccount(account: Account): Effect.Effect<void>
  getAccount(id: string): Effect.Effect<Option.Option<Account>>
  listAccounts(page: { readonly limit: number; readonly offset: number }): Effect.Effect<{
    readonly items: ReadonlyArray<Account>
    readonly total: number
  }>
  insertUser(user: User): Effect.Effect<void, WriteConflict>
  getUser(id: string): Effect.Effect<Option.Option<User>>
  findUserByEmail(email: string): Effect.Effect<Option.Option<User>>
}>()("@paydesk/core/AccountRepository") {}
