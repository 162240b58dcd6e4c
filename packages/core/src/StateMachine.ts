/**
 * State machines as data: a table `state -> event -> { to, emits }` and one pure `transition`.
 *
 * Payments, subscriptions, charges and payouts each declare such a table; a use case asks
 * the table whether a move is allowed and which callback events it emits, and never encodes
 * the rule itself. Tests walk each table to prove every state is reachable and final states
 * are final.
 */
import { Result } from "effect"
import { InvalidTransition } from "./Errors.js"

/** One allowed move: the next state and the callback events it emits, in order. */
export interface Edge<S extends string, Emit extends string> {
  readonly to: S
  readonly emits: ReadonlyArray<Emit>
}

/** A transition table: for each state, the events it accepts. */
export type Table<S extends string, E extends string, Emit extends string> = {
  readonly [state in S]: { readonly [event in E]?: Edge<S, Emit> }
}

/** A state machine: its name (for errors), its table, its initial states and its final states. */
export interface Machine<S extends string, E extends string, Emit extends string> {
  readonly entity: string
  readonly table: Table<S, E, Emit>
  readonly initial: ReadonlyArray<S>
  readonly final: ReadonlyArray<S>
}

/** Applies `event` to `from`, or fails with `InvalidTransition` when the table has no such edge. */
export const transition = <S extends string, E extends string, Emit extends string>(
  machine: Machine<S, E, Emit>,
  from: S,
  event: E
): Result.Result<Edge<S, Emit>, InvalidTransition> => {
  const edge = machine.table[from]?.[event]
  return edge === undefined
    ? Result.fail(
      new InvalidTransition({
        entity: machine.entity,
        from,
        event,
        message: `${machine.entity} in state ${from} does not accept ${event}`
      })
    )
    : Result.succeed(edge)
}

/** True when the table allows `event` in `from`. */
export const can = <S extends string, E extends string, Emit extends string>(
  machine: Machine<S, E, Emit>,
  from: S,
  event: E
): boolean => machine.table[from]?.[event] !== undefined

/** All states reachable from the machine's initial states. */
export const reachable = <S extends string, E extends string, Emit extends string>(
  machine: Machine<S, E, Emit>
): ReadonlySet<S> => {
  const seen = new Set<S>(machine.initial)
  const queue = [...machine.initial]
  while (queue.length > 0) {
    const state = queue.shift() as S
    const edges = machine.table[state] as Record<string, Edge<S, Emit>>
    for (const edge of Object.values(edges)) {
      if (!seen.has(edge.to)) {
        seen.add(edge.to)
        queue.push(edge.to)
      }
    }
  }
  return seen
}

/** Every `(from, event, to)` triple of the table, for tests and documentation. */
export const edges = <S extends string, E extends string, Emit extends string>(
  machine: Machine<S, E, Emit>
): ReadonlyArray<{ readonly from: S; readonly event: E; readonly to: S; readonly emits: ReadonlyArray<Emit> }> =>
  (Object.keys(machine.table) as Array<S>).flatMap((from) =>
    (Object.entries(machine.table[from]) as Array<[E, Edge<S, Emit>]>).map(([event, edge]) => ({
      from,
      event,
      to: edge.to,
      emits: edge.emits
    }))
  )
