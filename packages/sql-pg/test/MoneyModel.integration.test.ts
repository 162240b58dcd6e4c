import { Kit } from "@paydesk/testkit"
import { MoneyModel } from "@paydesk/testkit/contracts"
import { store, targets } from "./PgHarness.js"

// The model-based test of the money paths on every Postgres target. A run costs a fresh migrated
// database, so there are few runs; to reach the races anyway each run opens with one of each
// situation of the coverage (a stop during the bank call for each answer, a crash then a stop, a
// payout sent, `max_cycles` reached, a reversal), its random commands are weighted towards a stop
// landing during a bank call (`raceWeight`) and whole scenarios (`scenarioWeight`), and every
// situation of the coverage must be reached, as on the memory kit.
for (const target of targets) {
  MoneyModel.suite(`postgres (${target.name})`, Kit.layerAround(store(target.url)), {
    numRuns: 4,
    maxCommands: 25,
    opening: true,
    raceWeight: 4,
    scenarioWeight: 2,
    timeout: 120_000
  })
}
