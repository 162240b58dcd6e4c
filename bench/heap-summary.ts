/**
 * Not a bench: a V8 heap snapshot's self sizes summed by node type (strings, code, objects, …), and
 * its largest strings (a script's source is one: V8 keeps it to compile functions on first call, one
 * byte a character if the file is ASCII, two otherwise). For the idle server's heap, as round
 * thirty-seven of docs/performance.md took it:
 *
 *   node --max-semi-space-size=4 --max-old-space-size=192 --heap-growing-percent=100 \
 *     --heapsnapshot-signal=SIGUSR2 packages/server/dist/main.js &     # then, once idle:
 *   kill -USR2 <pid>                                                     # writes Heap.*.heapsnapshot in its directory
 *   ./run pnpm exec tsx bench/heap-summary.ts Heap.<…>.heapsnapshot
 *
 * `LARGEST=n` strings listed (default 10).
 */
import { readFileSync } from "node:fs"

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: ReadonlyArray<string>; readonly node_types: readonly [ReadonlyArray<string>, ...Array<unknown>] } }
  readonly nodes: ReadonlyArray<number>
  readonly strings: ReadonlyArray<string>
}

const file = process.argv[2]
if (file === undefined) {
  console.error("usage: tsx bench/heap-summary.ts <file.heapsnapshot>  (LARGEST=n)")
  process.exit(2)
}
const largest = Number(process.env.LARGEST ?? 10)
const heap = JSON.parse(readFileSync(file, "utf8")) as Snapshot
const fields = heap.snapshot.meta.node_fields
const types = heap.snapshot.meta.node_types[0]
const [typeAt, nameAt, sizeAt] = [fields.indexOf("type"), fields.indexOf("name"), fields.indexOf("self_size")]
const byType = new Map<string, number>()
const strings: Array<readonly [number, string]> = []
for (let i = 0; i < heap.nodes.length; i += fields.length) {
  const type = types[heap.nodes[i + typeAt]!]!
  const size = heap.nodes[i + sizeAt]!
  byType.set(type, (byType.get(type) ?? 0) + size)
  if (type === "string") strings.push([size, heap.strings[heap.nodes[i + nameAt]!]!])
}
const mb = (bytes: number) => (bytes / 1e6).toFixed(2).padStart(8)
const total = [...byType.values()].reduce((sum, size) => sum + size, 0)
console.log(`${file}: ${mb(total)} MB of self sizes`)
for (const [type, size] of [...byType].sort((a, b) => b[1] - a[1])) console.log(`${mb(size)} MB  ${type}`)
console.log(`largest strings:`)
for (const [size, text] of strings.sort((a, b) => b[0] - a[0]).slice(0, largest)) {
  console.log(`${mb(size)} MB  ${text.slice(0, 100).replace(/\s+/g, " ")}`)
}
