import { Kit } from "@paydesk/testkit"
import { MoneyModel } from "@paydesk/testkit/contracts"
import { store, targets } from "./PgHarness.js"

// The model-based test of the money paths on every Postgres target, with fewer runs than on the
// memory kit (a fresh migrated database per run).
for (const target of targets) {
  MoneyModel.suite(`postgres (${target.name})`, Kit.layerAround(store(target.url)), {
    numRuns: 15,
    maxCommands: 60,
    requireCoverage: false,
    timeout: 300_000
  })
}
