/** A callback receiver on loopback for the benchmarks: answers 200 and counts what it received. */
import { createServer } from "node:http"

export const start = async () => {
  const state = { received: 0 }
  const server = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      state.received++
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  const address = server.address()
  return {
    url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/cb`,
    state,
    close: () => new Promise<void>((ok) => server.close(() => ok()))
  }
}
