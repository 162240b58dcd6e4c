/**
 * Merchant and operator texts (order ids, descriptions, subscription references, plan codes,
 * terminal names, reasons) kept from reordering the dashboard's own text around them: shown in a
 * `<bdi>` with their own isolates balanced, or, where no element can hold them (a `title`
 * tooltip, an `<option>`), without bidi controls. A text with U+202E (right-to-left override) in a
 * sentence such as "Stop subscription {ref}? …" would otherwise turn the rest of the sentence
 * around. The payer pages do the same on the server (`@paydesk/fastify`'s `PublicPages.isolate`).
 */
import { type ComponentChildren, h, type VNode } from "preact"
import type { Key, Translate } from "./I18n.js"

/** The bidi formatting characters: embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069). */
const bidiControls = /[\u202a-\u202e\u2066-\u2069]/g

/** Text for a place no element can isolate (a tooltip, an `<option>`): the bidi formatting characters taken out. */
export const withoutBidiControls = (text: string): string => text.replace(bidiControls, "")

/** Characters that end a bidi paragraph (bidi class B): the isolates opened before one end there. */
const paragraphEnd = /[\n\r\u001c-\u001e\u0085\u2029]/

/**
 * `text` with its isolates balanced: a PDI (U+2069) that closes no isolate of the text's own is
 * dropped, and every isolate the text leaves open is closed at its end (and before each paragraph
 * end). Inside a `<bdi>` a stray PDI would close the element's own isolate (browsers isolate with
 * the same characters) and let the rest of the text reorder the page; embeddings and overrides
 * cannot outlive an isolate, so they stay.
 */
export const balanceIsolates = (text: string): string => {
  let out = ""
  let open = 0
  for (const char of text) {
    if (char === "\u2069") {
      if (open === 0) continue
      open -= 1
    } else if (char === "\u2066" || char === "\u2067" || char === "\u2068") {
      open += 1
    } else if (paragraphEnd.test(char)) {
      out += "\u2069".repeat(open)
      open = 0
    }
    out += char
  }
  return out + "\u2069".repeat(open)
}

/** A merchant or operator text isolated from the text around it. */
export const isolated = (text: string): VNode => h("bdi", null, balanceIsolates(text))

/**
 * The translation of `key` with `nodes` in the places of their placeholders (merchant or operator
 * texts, each `isolated`); `values` fill the other placeholders as `t` does.
 */
export const sentence = (
  t: Translate,
  key: Key,
  nodes: { readonly [name: string]: ComponentChildren },
  values: { readonly [name: string]: string | number } = {}
): Array<ComponentChildren> =>
  // `t` leaves the placeholders it is not given in place: those of `nodes` take their nodes.
  t(key, values).split(/(\{\w+\})/).flatMap((part) => {
    const name = /^\{(\w+)\}$/.exec(part)?.[1]
    if (name !== undefined && Object.prototype.hasOwnProperty.call(nodes, name)) return [nodes[name]]
    return part === "" ? [] : [part]
  })
