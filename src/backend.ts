/**
 * `openmcp-engine/backend`: the backend contract, the one thing a provider backend depends on — what it
 * implements (`ClusterBackend`), what it is given (`BackendContext`), what it reports (observations), the
 * contract's version, and the error helpers the engine formats failures with.
 */
export type { BackendPhase, ClusterCommand, ClusterObservation, ClusterTarget } from "./api/backend.ts";
export {
  type AdminAccess,
  type AdminScope,
  BACKEND_CONTRACT_VERSION,
  type BackendCapabilities,
  type BackendContext,
  type BackendContractVersion,
  type BackendFactory,
  type BackendModule,
  type ClusterBackend,
  type ConfigOffer,
  type OidcTrust,
  type SecretReader,
} from "./api/backend-contract.ts";
export { type Clock, systemClock, type TimerHandle } from "./api/clock.ts";
export type { SupportedVersion } from "./api/cluster-profile.ts";
export type { JsonArray, JsonObject, JsonPrimitive, JsonValue } from "./api/common.ts";
export {
  type ContractCompatibility,
  contractCompatibility,
  parseContractVersion,
} from "./api/contract-version.ts";
export {
  isSnapshotRejection,
  isSnapshotStorageFailure,
  type S3Credentials,
  type S3SnapshotLocation,
  type SnapshotFile,
  type SnapshotLocation,
  type SnapshotManifest,
  type SnapshotReference,
  SnapshotRejectedError,
  type SnapshotRejection,
  SnapshotStorageError,
  type SnapshotStorageFailure,
} from "./api/control-plane-snapshot.ts";
export type { FailureDomain } from "./api/engine-cluster.ts";
export { type ApiStatus, apiStatusOf, errorMessage, formatApiStatus } from "./api/error-message.ts";
export { type LogFields, type Logger, type LogLevel, silentLogger } from "./api/logger.ts";
export type { ProviderConfig, ProviderConfigSpec } from "./api/provider-config.ts";
export { BackendLoadError } from "./providers/registry.ts";
