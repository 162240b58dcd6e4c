import { Kit } from "@paydesk/testkit"
import { MoneyModel } from "@paydesk/testkit/contracts"
import { store, targets } from "./PgHarness.js"

// The model-based test of the money paths on every Postgres target. A run costs a fresh migrated
// database, so there are few runs; to reach the races anyway every run is weighted towards a stop
// landing during a bank call (`raceWeight`: a new active subscription whose due charge races a
// stop) and whole scenarios (`scenarioWeight`: a payout sent, a plan's `max_cycles` reached), and
// every situation of the coverage must be reached, as on the memory kit.
for (const target of targets) {
  MoneyModel.suite(`postgres (${target.name})`, Kit.layerAround(store(target.url)), {
    numRuns: 6,
    maxCommands: 30,
    raceWeight: 6,
    scenarioWeight: 3,
    timeout: 120_000
  })
}
