/**
 * A CPU profile's samples per item, grouped by where the code comes from: the time V8's sampler
 * found each function running itself (self time), summed per package (`effect`, `undici`, the
 * product's `paydesk/<package>`), per Node module (`node:internal`, `node:net`), per native
 * function (`native:writev`), or the collector, idle and program time; divided by the items the
 * profiled stretch handled (the callbacks of a drain, the sends of a round). With `BY=file`,
 * per source file instead of package (the bundle's files for the built server). Two profiles of the
 * same work (with and without HTTP, in the engine and in a tight loop) compare line by line.
 *
 *   ./run pnpm exec tsx bench/profile-summary.ts bench/profiles/work-callbacks.cpuprofile 2000
 *   BY=file TOP=40 ./run pnpm exec tsx bench/profile-summary.ts bench/profiles/client-transport.cpuprofile 20000
 *
 * A bundle's functions (the built server's `dist/*.js`: Effect, the core, the adapters in one file)
 * are mapped back to their sources through the bundle's source map (`<file>.map` beside it, read with
 * `node:module`'s `SourceMap`), so they are grouped as the sources' packages are (`effect`,
 * `paydesk/core`, …); `BY=function` lists functions (with their source file) instead.
 *
 * Sampling has a cost of its own, counted as `node:inspector` when the profile was taken from
 * inside the process (`bench:work`'s and `bench:client`'s `PROFILE=1`): at 100 µs intervals it
 * is as large as the work; compare profiles taken at the same interval.
 */
import { existsSync, readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { fileURLToPath } from "node:url"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
}

const [file, itemsText] = process.argv.slice(2)
const items = Number(itemsText)
if (file === undefined || !Number.isFinite(items) || items <= 0) {
  console.error("usage: tsx bench/profile-summary.ts <file.cpuprofile> <items>  (BY=package|file|function, TOP=n)")
  process.exit(2)
}
const byFile = process.env.BY === "file"
const byFunction = process.env.BY === "function"
const top = Number(process.env.TOP ?? 25)

const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ReadonlyArray<Node>; samples: ReadonlyArray<number>; timeDeltas: ReadonlyArray<number> }
// A sample's time is the delta to the next one (V8 gives each sample the delta since the previous).
const selfMicros = new Map<number, number>()
profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0)))

/** Source maps of the bundles met, by URL (null: none beside the file). */
const maps = new Map<string, SourceMap | null>()
const mapOf = (url: string): SourceMap | null => {
  let map = maps.get(url)
  if (map === undefined) {
    const path = url.startsWith("file://") ? `${fileURLToPath(url)}.map` : null
    map = path !== null && existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, "utf8"))) : null
    maps.set(url, map)
  }
  return map
}

/** The call frame in its source, when its file is a bundle with a source map (the function's own position). */
const original = (frame: Node["callFrame"]): Node["callFrame"] => {
  const map = frame.url === "" ? null : mapOf(frame.url)
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber)
  if (entry === undefined || !("originalSource" in entry)) return frame
  return { ...frame, url: new URL(entry.originalSource, frame.url).href }
}

const groupOf = (frame: Node["callFrame"]): string => {
  const { functionName, url } = original(frame)
  if (byFunction && url !== "") return `${functionName || "(anonymous)"}  ${url.replace(/^file:\/\/.*?\/(node_modules\/\.pnpm\/[^/]+\/node_modules\/|packages\/)/, "")}`
  if (url === "") {
    if (functionName === "(garbage collector)") return "collector"
    if (functionName === "(idle)" || functionName === "(program)") return functionName.slice(1, -1)
    return `native:${functionName}`
  }
  if (url.startsWith("node:")) return byFile ? url : `node:${url.slice(5).split("/")[0]}`
  if (byFile) return url.replace(/^file:\/\/.*?\/(node_modules\/\.pnpm\/[^/]+\/node_modules\/|packages\/)/, "")
  const dependency = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (dependency !== null) return dependency[1]!
  const own = /\/packages\/([^/]+)\//.exec(url)
  return own !== null ? `paydesk/${own[1]}` : url.replace(/^file:\/\/.*\//, "")
}

const totals = new Map<string, number>()
let all = 0
for (const node of profile.nodes) {
  const micros = selfMicros.get(node.id) ?? 0
  if (micros === 0) continue
  const group = groupOf(node.callFrame)
  totals.set(group, (totals.get(group) ?? 0) + micros)
  all += micros
}
const busy = all - (totals.get("idle") ?? 0) - (totals.get("node:inspector") ?? 0)
console.log(`${file}: ${(all / 1000).toFixed(0)} ms sampled, ${(all / items).toFixed(1)} µs per item; busy (not idle, not the profiler) ${(busy / items).toFixed(1)} µs per item`)
for (const [group, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${(micros / items).toFixed(1).padStart(9)} µs  ${group}`)
}
