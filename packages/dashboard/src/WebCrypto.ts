/** Stands in for `node:crypto` in the browser build: the SDK's fallback, never reached where Web Crypto exists. */
export const webcrypto: Crypto = globalThis.crypto
