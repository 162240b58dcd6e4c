import { Kit } from "@paydesk/testkit"
import { MoneyModel } from "@paydesk/testkit/contracts"

// The default run: the memory kit, bounded (fast-check prints the seed and the shrunk commands of a failure).
MoneyModel.suite("memory", Kit.layer, { numRuns: 200, maxCommands: 80 })
