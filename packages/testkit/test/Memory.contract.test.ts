import * as MemoryStore from "../src/MemoryStore.js"
import * as TransactionsContract from "../src/contracts/TransactionsContract.js"

TransactionsContract.suite("memory", MemoryStore.layer)
