/**
 * @paydesk/fastify: the HTTP host of Paydesk as a Fastify app factory over the core's use cases.
 */
export * as App from "./App.js"
export * as CallbacksGuide from "./CallbacksGuide.js"
export * as Contract from "./Contract.js"
export * as Examples from "./Examples.js"
export * as Http from "./Http.js"
export * as HostRoutes from "./HostRoutes.js"
export * as HttpErrors from "./HttpErrors.js"
export * as MerchantRoutes from "./MerchantRoutes.js"
export * as PublicRoutes from "./PublicRoutes.js"
export * as AdminRoutes from "./AdminRoutes.js"
export * as MerchantOperations from "./MerchantOperations.js"
export * as OpenApi from "./OpenApi.js"
export * as OperatorOperations from "./OperatorOperations.js"
export * as Schemas from "./Schemas.js"
export * as ResponseSchemas from "./ResponseSchemas.js"
