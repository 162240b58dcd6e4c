/**
 * undici's agent module (`lib/dispatcher/agent.js`, `module.exports = Agent`): the `Agent` undici's
 * index exports, without what the index adds to every dispatcher's prototype when it loads (`request`,
 * `stream`, `pipeline`, `connect`, `upgrade`): loaded alone, an agent has `dispatch`, `close` and
 * `destroy`, which is what the callback client uses.
 */
declare module "undici/lib/dispatcher/agent.js" {
  import type { Agent } from "undici"
  type AgentAlone = Omit<Agent, "request" | "stream" | "pipeline" | "connect" | "upgrade">
  const AgentAlone: new (options?: Agent.Options) => AgentAlone
  export default AgentAlone
}
