/**
 * Port: accounts and their dashboard users.
 *
 * Contract: e-mails are unique case-insensitively (stored lowercased); `insertUser` fails
 * with `WriteConflict` on a duplicate e-mail. Lookups return `Option.none()` for unknown ids.
 * `listAccounts` returns accounts newest first (`createdAt` desc, then id) with the total count.
 * `listUsers` returns an account's users, oldest first (`createdAt`, then id).
 * `lockUser` reads a user under a shared lock held until the caller's transaction ends, and
 * `setPassword(id, hash, expected)` replaces the user's password hash when it is still `expected`
 * (any, without it) under an exclusive one, answering whether it did (false for an unknown user):
 * a login that checked a password before a change commits, then issues its session under
 * `lockUser`, sees the new hash and refuses, or commits first and has its session ended by the
 * change (an adapter with concurrent transactions makes them wait for each other; the memory
 * adapter's transactions run one at a time).
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
  listUsers(accountId: string): Effect.Effect<ReadonlyArray<User>>
  lockUser(id: string): Effect.Effect<Option.Option<User>>
  setPassword(id: string, passwordHash: string, expected?: string): Effect.Effect<boolean>
}>()("@paydesk/core/AccountRepository") {}
