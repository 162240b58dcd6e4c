/**
 * The request rules JSON.parse does not enforce: a bounded nesting depth (deep bodies once
 * overflowed the stack of code that walks them) and no duplicate keys in an object (JSON.parse keeps
 * the last, so two readers of one body could disagree). No maintained parser refuses duplicate keys,
 * so this is one iterative pass over text JSON.parse has already accepted: it counts brackets
 * outside strings and keeps the decoded keys of each open object. It never recurses.
 *
 * `hasNul` finds NUL characters (`\u0000`) in the strings and keys of a parsed value, the one
 * character PostgreSQL text cannot hold, also iteratively.
 */

/** Deepest nesting of arrays and objects a request body may have. */
export const maxDepth = 32

/** What is wrong with a body that JSON.parse accepted. */
export type Problem =
  | { readonly _tag: "TooDeep"; readonly limit: number }
  | { readonly _tag: "DuplicateKey"; readonly key: string }

const QUOTE = 0x22
const BACKSLASH = 0x5c

/** The first problem of valid JSON text, or null. */
export const check = (text: string, limit: number = maxDepth): Problem | null => {
  // One entry per open container: the keys seen so far for an object, null for an array.
  const open: Array<Set<string> | null> = []
  let keyNext = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      let end = i + 1
      for (;;) {
        const d = text.charCodeAt(end)
        if (d === BACKSLASH) end += 2
        else if (d === QUOTE || Number.isNaN(d)) break
        else end++
      }
      const keys = open[open.length - 1]
      if (keyNext && keys instanceof Set) {
        const key = JSON.parse(text.slice(i, end + 1)) as string
        if (keys.has(key)) return { _tag: "DuplicateKey", key }
        keys.add(key)
        keyNext = false
      }
      i = end
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      open.push(c === 0x7b ? new Set() : null)
      if (open.length > limit) return { _tag: "TooDeep", limit }
      keyNext = c === 0x7b
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop()
      keyNext = false
    } else if (c === 0x2c /* , */) {
      keyNext = open[open.length - 1] instanceof Set
    } else if (c === 0x3a /* : */) {
      keyNext = false
    }
  }
  return null
}

/** The path (`metadata.note`, `items.0`) of the first string or key holding a NUL character, or null. */
export const findNul = (value: unknown, root: string): string | null => {
  const pending: Array<readonly [unknown, string]> = [[value, root]]
  let seen = 0
  while (pending.length > 0) {
    const [item, path] = pending.pop()!
    // A parsed body is a tree; the bound only guards against a cyclic value handed in by a host.
    if (++seen > 1_000_000) return null
    if (typeof item === "string") {
      if (item.includes("\u0000")) return path
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => pending.push([element, path === "" ? String(index) : `${path}.${index}`]))
    } else if (typeof item === "object" && item !== null) {
      for (const [key, element] of Object.entries(item)) {
        const at = path === "" ? key : `${path}.${key}`
        if (key.includes("\u0000")) return at.replaceAll("\u0000", "\\u0000")
        pending.push([element, at])
      }
    }
  }
  return null
}
