/**
 * @paydesk/server: the reference deployment (configuration, composition root, local worker).
 */
export * as CliCommands from "./CliCommands.js"
export * as Config from "./Config.js"
export * as HttpCallbackTransport from "./HttpCallbackTransport.js"
export * as LocalWorker from "./LocalWorker.js"
export * as Server from "./Server.js"
