/**
 * Allocation sampling of another Node process through its inspector (started with
 * `--inspect=127.0.0.1:0`): V8's sampling heap profiler with the objects that minor and major
 * collections freed included, so the samples add up to what was allocated, not to what survived.
 * With `survivors`, the objects a minor collection freed are left out: what remains is what lived
 * through a scavenge into the old generation, whose garbage costs mark-compacts.
 * `bench:http` uses it with `ALLOCATIONS=1` (or `ALLOCATIONS=survivors`) around its first phase (or
 * its second, `ALLOCATIONS_PHASE=2`).
 * `startCpu` does the same with V8's CPU profiler (`bench:http`'s `CPU_WINDOW`): a profile of a
 * phase's measured seconds, without the process's start or the backlog it drained before them.
 */

/** The inspector's WebSocket address from the process's output (`Debugger listening on ws://…`). */
export const inspectorUrl = (output: string): string | null => /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1] ?? null

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<ProfileNode>
}

/** What a sampling saw: bytes allocated in all, and the allocation sites with the most bytes. */
export interface Allocations {
  readonly bytes: number
  readonly top: ReadonlyArray<{ readonly site: string; readonly bytes: number }>
  /** The sampled profile as V8 gave it (a `.heapprofile` that Chrome DevTools' Memory tab opens). */
  readonly profile: unknown
}

/** A session with the inspector at `url`: `call` sends a method and resolves with its result. */
const connect = async (url: string) => {
  const socket = new WebSocket(url)
  await new Promise<void>((ok, fail) => {
    socket.addEventListener("open", () => ok(), { once: true })
    socket.addEventListener("error", () => fail(new Error(`no inspector at ${url}`)), { once: true })
  })
  let id = 0
  const waiting = new Map<number, { ok: (result: Record<string, unknown>) => void; fail: (error: Error) => void }>()
  socket.addEventListener("message", (message) => {
    const data = JSON.parse(String(message.data)) as { id?: number; result?: Record<string, unknown>; error?: { message?: string } }
    if (data.id === undefined) return
    const call = waiting.get(data.id)
    waiting.delete(data.id)
    if (data.error !== undefined) call?.fail(new Error(`inspector: ${data.error.message ?? "error"}`))
    else call?.ok(data.result ?? {})
  })
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((ok, fail) => {
      const n = ++id
      waiting.set(n, { ok, fail })
      socket.send(JSON.stringify({ id: n, method, params }))
    })
  return { call, close: () => socket.close() }
}

/** Starts sampling in the process at `url`; `stop` ends it and sums the samples. */
export const start = async (url: string, options: { readonly survivors?: boolean; readonly samplingInterval?: number } = {}) => {
  const { call, close } = await connect(url)
  await call("HeapProfiler.enable")
  await call("HeapProfiler.startSampling", {
    samplingInterval: options.samplingInterval ?? 16384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: options.survivors !== true
  })
  return {
    stop: async (topCount = 12): Promise<Allocations> => {
      const { profile } = await call("HeapProfiler.stopSampling") as { profile: { head: ProfileNode } }
      close()
      const sites = new Map<string, number>()
      let bytes = 0
      const walk = (node: ProfileNode) => {
        const { functionName, url: file, lineNumber } = node.callFrame
        const site = `${functionName || "(anonymous)"} ${file.split("/").slice(-2).join("/")}:${lineNumber + 1}`
        bytes += node.selfSize
        sites.set(site, (sites.get(site) ?? 0) + node.selfSize)
        node.children.forEach(walk)
      }
      walk(profile.head)
      const top = [...sites].sort((a, b) => b[1] - a[1]).slice(0, topCount).map(([site, n]) => ({ site, bytes: n }))
      return { bytes, top, profile }
    }
  }
}

/**
 * Starts V8's CPU profiler in the process at `url`, sampling every `intervalUs`; `stop` ends it and
 * answers the profile (a `.cpuprofile`, as `--cpu-prof` writes one, but of this window only).
 */
export const startCpu = async (url: string, intervalUs = 1000) => {
  const { call, close } = await connect(url)
  await call("Profiler.enable")
  await call("Profiler.setSamplingInterval", { interval: intervalUs })
  await call("Profiler.start")
  return {
    stop: async (): Promise<unknown> => {
      const { profile } = await call("Profiler.stop")
      close()
      return profile
    }
  }
}
