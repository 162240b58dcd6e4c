/**
 * Two server processes (real OS processes, each with its own local engine) on one database run
 * the same due work at once: every charge and every callback delivery happens once.
 */
import { afterEach, describe, expect, it } from "vitest"
import { EmbeddedPostgres } from "@paydesk/sql-pg"
import { randomBytes } from "node:crypto"
import { freshDatabase, pgTargets } from "./ServerHarness.js"
import { client, database, dataDir, pool, receiver, type ServerProcess, spawnServer } from "./ServerProcess.js"

const SUBSCRIPTIONS = 40
const CYCLES = 2
const adminToken = "two-admin"
const day = 86_400_000

const servers: Array<ServerProcess> = []
let db: ReturnType<typeof database> | null = null
let callbacks: Awaited<ReturnType<typeof receiver>> | null = null

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.kill("SIGTERM")))
  await db?.close()
  await callbacks?.close()
  db = callbacks = null
})

for (const target of pgTargets()) describe(`two server processes on one database (postgres ${target.name})`, () => {
  it("share the due work: each cycle charged once, each callback delivered once", async () => {
    const databaseUrl = await freshDatabase(target)
    const sql = (db = database(databaseUrl))
    const { url: receiverUrl, receipts } = (callbacks = await receiver(5))
    let now = Math.ceil((Date.now() + 400 * day) / 3_600_000) * 3_600_000
    // One database and one secret key (secrets at rest must decrypt in both); each its own port and worker.
    const shared = {
      DATABASE_URL: databaseUrl,
      PAYDESK_SECRET_KEY: randomBytes(32).toString("base64"),
      PAYDESK_ADMIN_TOKEN: adminToken,
      PAYDESK_CLOCK: "manual",
      // The clock jumps months ahead: keep every event (the checks read them all).
      PAYDESK_EVENT_RETENTION_DAYS: "3650",
      PAYDESK_CLOCK_START: new Date(now).toISOString(),
      PAYDESK_ENGINE: "local",
      PAYDESK_WORK_INTERVAL_MS: "50",
      // Small batches, so both engines take part of each month's charges.
      PAYDESK_WORK_BATCH_SIZE: "4"
    }
    const started = await Promise.all([0, 1].map(async () => {
      const port = await EmbeddedPostgres.freePort()
      servers.push(await spawnServer({ ...shared, PORT: String(port), PAYDESK_DATA_DIR: dataDir() }))
      return client(`http://127.0.0.1:${port}`, adminToken)
    }))
    const [a, b] = started as [ReturnType<typeof client>, ReturnType<typeof client>]
    const count = async (text: string, params: ReadonlyArray<unknown> = []) =>
      Number((await sql.query<{ n: string }>(text, params))[0]!.n)
    const waitUntil = async (what: string, check: () => Promise<boolean>) => {
      const deadline = Date.now() + 60_000
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out: ${what}\n${servers.map((s) => s.output().slice(-2000)).join("\n")}`)
        await new Promise((ok) => setTimeout(ok, 100))
      }
    }

    const merchant = await a.merchant(receiverUrl)
    // Subscriptions come in through both servers.
    await pool(Array.from({ length: SUBSCRIPTIONS }, (_, i) => i), 8, async (i) => {
      await (i % 2 === 0 ? a : b).subscribe(merchant, `p-${i}`, sql)
    })
    const settled = () => waitUntil("every delivery delivered", async () =>
      (await count("SELECT count(*) AS n FROM deliveries WHERE status <> 'delivered'")) === 0)
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      // The manual clock jumps a month: nothing may be in flight then, or its lease would lapse at once.
      await settled()
      now += 30 * day + 3_600_000
      // Both engines find the same subscriptions due at the same moment.
      await Promise.all([a.setClock(now), b.setClock(now)])
      await waitUntil(`cycle ${cycle}`, async () =>
        (await count("SELECT count(*) AS n FROM subscriptions WHERE successful_cycles >= $1", [cycle + 1])) === SUBSCRIPTIONS)
    }
    await settled()

    // Each cycle charged once at the bank (shared by both processes) and recorded once.
    expect(await count("SELECT count(*) AS n FROM emulator_charges")).toBe(SUBSCRIPTIONS * CYCLES)
    expect(await count("SELECT count(*) AS n FROM (SELECT subscription_id, cycle_number FROM emulator_charges GROUP BY 1, 2 HAVING count(*) > 1) t")).toBe(0)
    expect(await count("SELECT count(*) AS n FROM subscriptions WHERE successful_cycles = $1", [CYCLES + 1])).toBe(SUBSCRIPTIONS)
    // Both processes charged (the bank records which process asked).
    const byProcess = await sql.query<{ client: string; n: string }>("SELECT client, count(*) AS n FROM emulator_charges GROUP BY 1")
    expect(byProcess.map((r) => r.client.split(":").at(-1)).sort()).toEqual(servers.map((s) => String(s.process.pid)).sort())
    // Every callback exactly once, in one attempt.
    const events = await sql.query<{ body: string }>("SELECT body FROM outbox_events")
    expect(events.length).toBe(2 * SUBSCRIPTIONS + SUBSCRIPTIONS * CYCLES)
    expect(receipts.map((r) => r.body).sort()).toEqual(events.map((e) => e.body).sort())
    expect(await count("SELECT count(*) AS n FROM delivery_attempts")).toBe(events.length)
  }, 180_000)
})
