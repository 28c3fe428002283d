/**
 * The stand-ins `openmcp-engine up` may start beside the engine, in one module so that the command loads them
 * with one dynamic import: a checkout of the repository has them, the package ships none of them.
 */
export { type CapiManager, startCapiManager } from "./capi-manager.ts";
export { type GardenerDemo, startGardenerDemo } from "./gardener-demo.ts";
export { type OidcIssuer, startOidcIssuer } from "./oidc-issuer.ts";
