import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import * as fc from "fast-check"
import * as Id from "../src/Id.js"

const uuid = "5b0e7a52-3c1d-4a8e-9f00-2f6f0d1c9a11"
const upper = uuid.toUpperCase()

describe("Id", () => {
  describe("isUuid and parseUuid", () => {
    it.each([
      uuid,
      upper,
      "00000000-0000-0000-0000-000000000000",
      "ffffffff-ffff-ffff-ffff-ffffffffffff",
      "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    ])("accepts %j", (input) => {
      assert.isTrue(Id.isUuid(input))
      assert.deepStrictEqual(Id.parseUuid(input), Option.some(input.toLowerCase()))
    })

    it.each([
      "",
      "5b0e7a52-3c1d-4a8e-9f00-2f6f0d1c9a1",
      "5b0e7a52-3c1d-4a8e-9f00-2f6f0d1c9a111",
      "5b0e7a523c1d4a8e9f002f6f0d1c9a11",
      "{5b0e7a52-3c1d-4a8e-9f00-2f6f0d1c9a11}",
      "5b0e7a52-3c1d-4a8e-9f00-2f6f0d1c9a1g",
      ` ${uuid}`,
      `${uuid}\n`,
      `pay_${uuid}`,
      42
    ])("rejects %j", (input) => {
      assert.isFalse(Id.isUuid(input))
      assert.isTrue(Option.isNone(Id.parseUuid(input)))
    })

    it("accepts every generated UUID", () => {
      fc.assert(fc.property(fc.uuid(), (id) => Id.isUuid(id) && Id.isUuid(id.toUpperCase())))
    })
  })

  describe("payments", () => {
    it("formats pay_<lowercase uuid>", () => {
      assert.strictEqual(Id.paymentId(uuid), `pay_${uuid}`)
      assert.strictEqual(Id.paymentId(upper), `pay_${uuid}`)
      assert.throws(() => Id.paymentId("not-a-uuid"), RangeError)
      assert.throws(() => Id.paymentId(`pay_${uuid}`), RangeError)
    })

    it("parses the prefixed and the bare form to the bare lowercase UUID", () => {
      assert.deepStrictEqual(Id.parsePaymentId(`pay_${uuid}`), Option.some(uuid))
      assert.deepStrictEqual(Id.parsePaymentId(`pay_${upper}`), Option.some(uuid))
      assert.deepStrictEqual(Id.parsePaymentId(uuid), Option.some(uuid))
      assert.deepStrictEqual(Id.parsePaymentId(upper), Option.some(uuid))
      // The prefix in any case, as the UUID and as event ids (`EVT_…`; an outside probe found PAY_ 404, EVT_ 200).
      assert.deepStrictEqual(Id.parsePaymentId(`PAY_${upper}`), Option.some(uuid))
      assert.deepStrictEqual(Id.parsePaymentId(`Pay_${uuid}`), Option.some(uuid))
      assert.deepStrictEqual(Id.parsePayoutId(`PO_${uuid}`), Option.some(uuid))
    })

    const notPayments = [`po_${uuid}`, `PO_${uuid}`, `pay-${uuid}`, `pay_pay_${uuid}`, "pay_", "pay_123", "", null]
    it.each([...notPayments, ` pay_${uuid}`])(
      "rejects %j",
      (input) => {
        assert.isTrue(Option.isNone(Id.parsePaymentId(input)))
      }
    )

    it("round-trips", () => {
      fc.assert(
        fc.property(fc.uuid(), (id) => Option.getOrThrow(Id.parsePaymentId(Id.paymentId(id))) === id.toLowerCase())
      )
    })
  })

  describe("payouts", () => {
    it("formats po_<lowercase uuid>", () => {
      assert.strictEqual(Id.payoutId(upper), `po_${uuid}`)
      assert.throws(() => Id.payoutId(""), RangeError)
    })

    it("parses the prefixed and the bare form", () => {
      assert.deepStrictEqual(Id.parsePayoutId(`po_${upper}`), Option.some(uuid))
      assert.deepStrictEqual(Id.parsePayoutId(uuid), Option.some(uuid))
      assert.isTrue(Option.isNone(Id.parsePayoutId(`pay_${uuid}`)))
      assert.isTrue(Option.isNone(Id.parsePayoutId("po_")))
    })

    it("round-trips", () => {
      fc.assert(
        fc.property(fc.uuid(), (id) => Option.getOrThrow(Id.parsePayoutId(Id.payoutId(id))) === id.toLowerCase())
      )
    })
  })
})
