/** undici's agent module (`lib/dispatcher/agent.js`, `module.exports = Agent`): the `Agent` its index exports. */
declare module "undici/lib/dispatcher/agent.js" {
  import { Agent } from "undici"
  export default Agent
}
