/**
 * Crash test: the real server process is killed with SIGKILL at random moments while 200
 * payments are paid and 100 subscriptions are charged three times; each time it is started
 * again on the same database. Afterwards every callback event has reached the receiver (none
 * lost; a repeat only for a delivery that was in flight at a kill, with the same body, timestamp
 * and signature), and the emulated bank — which keeps its book in the database, as a real bank
 * outlives our process — performed exactly one charge per subscription cycle.
 */
import { afterEach, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Callbacks, Signature } from "@paydesk/core"
import { EmbeddedPostgres } from "@paydesk/sql-pg"
import { randomBytes } from "node:crypto"
import { freshDatabase, pgTargets } from "./ServerHarness.js"
import { client, database, dataDir, expectOk, pool, receiver, request, type ServerProcess, spawnServer } from "./ServerProcess.js"

const PAYMENTS = 200
const SUBSCRIPTIONS = 100
const CYCLES = 3
const adminToken = "crash-admin"
const day = 86_400_000

let server: ServerProcess | null = null
let db: ReturnType<typeof database> | null = null
let callbacks: Awaited<ReturnType<typeof receiver>> | null = null

afterEach(async () => {
  await server?.kill("SIGKILL")
  await db?.close()
  await callbacks?.close()
  server = db = callbacks = null
})

for (const target of pgTargets()) describe(`crash safety of the reference server (postgres ${target.name})`, () => {
  it("SIGKILL at random moments while paying 200 payments and charging 100 subscriptions: nothing lost, nothing twice", async () => {
    const databaseUrl = await freshDatabase(target)
    const sql = (db = database(databaseUrl))
    // A short think time widens the window in which a kill leaves a delivery in flight.
    const { url: receiverUrl, receipts, holdNext } = (callbacks = await receiver(20))
    const port = await EmbeddedPostgres.freePort()
    const env = {
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      PAYDESK_DATA_DIR: dataDir(),
      PAYDESK_ADMIN_TOKEN: adminToken,
      PAYDESK_SECRET_KEY: randomBytes(32).toString("base64"),
      PAYDESK_CLOCK: "manual",
      // The clock jumps months ahead: keep every event (the checks read them all).
      PAYDESK_EVENT_RETENTION_DAYS: "3650",
      PAYDESK_ENGINE: "local",
      PAYDESK_WORK_INTERVAL_MS: "100"
    }
    // Manual time, far from the system time; every start of the server resumes it a lease later.
    let now = Math.ceil((Date.now() + 400 * day) / 3_600_000) * 3_600_000
    const start = async () => {
      server = await spawnServer({ ...env, PAYDESK_CLOCK_START: new Date(now).toISOString() })
    }
    const paydesk = client(`http://127.0.0.1:${port}`, adminToken, 60_000)
    /** Moves the manual clock; a try that meets a restarted server sends the time as it is then, never an older one. */
    const setClock = async (ms: number) => {
      now = Math.max(now, ms)
      for (let tries = 0; ; tries++) {
        try {
          return expectOk(await request(`http://127.0.0.1:${port}`, "POST", "/admin/v1/clock", {
            body: { now: new Date(now).toISOString() }, headers: { authorization: `Bearer ${adminToken}` }
          }), "clock")
        } catch (error) {
          if (tries > 600) throw error
          await new Promise((ok) => setTimeout(ok, 100))
        }
      }
    }
    const count = async (text: string, params: ReadonlyArray<unknown> = []) =>
      Number((await sql.query<{ n: string }>(text, params))[0]!.n)
    const waitUntil = async (what: string, check: () => Promise<boolean>, timeoutMs = 90_000) => {
      const deadline = Date.now() + timeoutMs
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out: ${what}\n${server?.output().slice(-3000)}`)
        await new Promise((ok) => setTimeout(ok, 200))
      }
    }

    await start()

    // Setup, without kills: a merchant, a monthly plan, 100 active subscriptions, 200 unpaid payments.
    const merchant = await paydesk.merchant(receiverUrl)
    await pool(Array.from({ length: SUBSCRIPTIONS }, (_, i) => i), 8, async (i) => {
      await paydesk.subscribe(merchant, `u-${i}`, sql)
    })
    expect(await count("SELECT count(*) AS n FROM subscriptions WHERE billing_status = 'enabled' AND successful_cycles = 1")).toBe(SUBSCRIPTIONS)
    const payments: Array<string> = []
    await pool(Array.from({ length: PAYMENTS }, (_, i) => i), 8, async (i) => {
      payments.push(expectOk(await merchant.api("POST", "/payments", { amount: "1000.50", order_id: `ord-${i}` }), "payment").id)
    })

    // Chaos: a killer restarts the server at random moments until the work is done.
    const kills: Array<{ readonly from: number; readonly to: number }> = []
    let chaos = true
    // Phases: paying the payments, then each cycle of charges; at most a few kills in each, so every
    // phase is hit and the run stays short.
    let phase = 0
    const killsPerPhase = 5
    const killer = (async () => {
      // The first kill is sure to cut a delivery short: the receiver keeps one request unanswered.
      await Promise.race([holdNext(), new Promise((ok) => setTimeout(ok, 10_000))])
      while (chaos) {
        if (kills.length > 0) await new Promise((ok) => setTimeout(ok, 100 + Math.random() * 600))
        if (kills.length >= killsPerPhase * (phase + 1)) continue
        if (!chaos) break
        const from = Date.now()
        await server!.kill("SIGKILL")
        kills.push({ from, to: Date.now() })
        now += 61_000 // a lease later: work claimed by the dead process is due again
        await start()
      }
    })()
    try {
      await pool(payments, 4, async (id) => {
        const paid = await paydesk.admin("POST", `/acquirer/payments/${id}/outcome`, { outcome: "paid" })
        // A repeat of a request whose answer the kill lost finds the payment already paid.
        if (paid.status !== 200) {
          const current = await sql.query<{ status: string }>("SELECT status FROM payments WHERE id = $1", [id.replace(/^pay_/, "")])
          expect([paid.status, current[0]?.status]).toEqual([paid.status, "paid"])
        }
      })
      const activatedAt = now
      for (let cycle = 1; cycle <= CYCLES; cycle++) {
        phase = cycle
        // A month's jump of the manual clock would lapse the lease of anything in flight: let it land first.
        await waitUntil("deliveries settled", async () =>
          (await count("SELECT count(*) AS n FROM deliveries WHERE status <> 'delivered'")) === 0)
        await setClock(activatedAt + cycle * 30 * day + 3_600_000)
        await waitUntil(`cycle ${cycle} charged`, async () =>
          (await count("SELECT count(*) AS n FROM subscriptions WHERE successful_cycles >= $1", [cycle + 1])) === SUBSCRIPTIONS)
      }
    } finally {
      chaos = false
      await killer
    }
    expect(kills.length).toBeGreaterThanOrEqual(3)

    // Let the last server finish: leases of work in flight at the last kill run out.
    await waitUntil("every delivery delivered", async () => {
      await setClock(now + 61_000)
      return (await count("SELECT count(*) AS n FROM deliveries WHERE status <> 'delivered'")) === 0
    })

    // Nothing charged twice: one bank charge per subscription cycle, each a paid payment.
    expect(await count("SELECT count(*) AS n FROM emulator_charges")).toBe(SUBSCRIPTIONS * CYCLES)
    expect(await count(`SELECT count(*) AS n FROM (SELECT subscription_id, cycle_number FROM emulator_charges
      GROUP BY 1, 2 HAVING count(*) > 1) twice`)).toBe(0)
    expect(await count("SELECT count(*) AS n FROM subscriptions WHERE successful_cycles = $1", [CYCLES + 1])).toBe(SUBSCRIPTIONS)
    expect(await count("SELECT count(*) AS n FROM payments WHERE subscription_id IS NOT NULL AND status = 'paid'")).toBe(SUBSCRIPTIONS * (CYCLES + 1))
    expect(await count("SELECT count(*) AS n FROM payments WHERE subscription_id IS NULL AND status = 'paid'")).toBe(PAYMENTS)

    // Every event reached the receiver, correctly signed; repeats only across a kill, byte-identical.
    const events = await sql.query<{ body: string }>("SELECT body FROM outbox_events")
    // created + paid for every payment and first payment, paid for every charge
    expect(events.length).toBe(2 * PAYMENTS + 2 * SUBSCRIPTIONS + SUBSCRIPTIONS * CYCLES)
    const byBody = new Map<string, Array<(typeof receipts)[number]>>()
    for (const receipt of receipts) byBody.set(receipt.body, [...(byBody.get(receipt.body) ?? []), receipt])
    expect(new Set(events.map((e) => e.body)).size).toBe(events.length)
    const missing = events.filter((e) => !byBody.has(e.body))
    expect(missing).toEqual([])
    expect(byBody.size).toBe(events.length)
    for (const receipt of receipts) {
      const verdict = await Effect.runPromise(Signature.verify({
        secret: merchant.signingSecret, timestamp: receipt.timestamp, body: receipt.body, signature: receipt.signature,
        nowSeconds: Number(receipt.timestamp) // the manual clock's time, not the system's
      }))
      expect(verdict).toEqual({ ok: true })
    }
    const repeated = [...byBody.values()].filter((copies) => copies.length > 1)
    expect(repeated.length).toBeGreaterThan(0)
    // The receiver always answered 200 (or never, once): each delivery took exactly one recorded attempt.
    expect(await count("SELECT count(*) AS n FROM deliveries WHERE attempts <> 1")).toBe(0)
    const attemptAt = new Map((await sql.query<{ body: string; at: Date }>(`SELECT e.body, a.at FROM delivery_attempts a
      JOIN deliveries d ON d.id = a.delivery_id JOIN outbox_events e ON e.id = d.event_id`)).map((r) => [r.body, new Date(r.at).getTime()]))
    for (const copies of repeated) {
      // Recorded by a later life of the server (each start resumes the manual clock a lease later).
      expect(attemptAt.get(copies[0]!.body)!).toBeGreaterThanOrEqual(Number(copies[0]!.timestamp) * 1000 + 60_000)
      for (const copy of copies.slice(1)) {
        // The same attempt again: byte-identical, unless its stamp had grown too old to reuse.
        const aged = Number(copy.timestamp) - Number(copies[0]!.timestamp)
        if (aged !== 0) expect(aged).toBeGreaterThan(240)
        else expect(copy.signature).toBe(copies[0]!.signature)
        const previous = copies[copies.indexOf(copy) - 1]!
        // (a copy the dead process sent may reach the receiver's event loop a moment after its exit)
        expect(kills.some((k) => previous.at <= k.to + 1_000 && copy.at >= k.from)).toBe(true)
      }
    }
    // At most the deliveries one process had in flight at each kill: a pass sends at most
    // Callbacks.concurrency at once (the local worker runs one pass at a time), and the engine as many
    // of the callbacks handed off to it (LocalHandoff's default concurrency).
    expect(receipts.length - events.length).toBeLessThanOrEqual(kills.length * 2 * Callbacks.concurrency)
    console.info(`crash test: ${kills.length} kills, ${receipts.length} requests for ${events.length} events, ${repeated.length} repeated`)
  }, 600_000)
})
