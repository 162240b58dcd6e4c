/**
 * Web Crypto on every runtime: the global `crypto` (Node >= 19, Bun, Deno, browsers and edge
 * runtimes), else Node 18's `node:crypto` webcrypto.
 */
let found: Promise<Crypto> | undefined

/** The runtime's Web Crypto. */
export const webCrypto = (): Promise<Crypto> =>
  found ??= globalThis.crypto?.subtle !== undefined
    ? Promise.resolve(globalThis.crypto)
    : import("node:crypto").then((m) => m.webcrypto as unknown as Crypto)

/** A random UUID (v4), for nonces and idempotency keys. */
export const uuid = async (): Promise<string> => (await webCrypto()).randomUUID()
