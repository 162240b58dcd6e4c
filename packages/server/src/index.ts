/**
 * @paydesk/server: the reference deployment (settings, the layer graph, engines, observability).
 */
export * as CliProgram from "./CliProgram.js"
export * as CliCommands from "./CliCommands.js"
export * as CliDev from "./CliDev.js"
export * as Config from "./Config.js"
export * as Engine from "./Engine.js"
export * as HttpCallbackTransport from "./HttpCallbackTransport.js"
export * as LocalHandoff from "./LocalHandoff.js"
export * as LocalWakeups from "./LocalWakeups.js"
export * as LocalWorker from "./LocalWorker.js"
export * as Logging from "./Logging.js"
export * as Metrics from "./Metrics.js"
export * as Server from "./Server.js"
export * as Telemetry from "./Telemetry.js"
