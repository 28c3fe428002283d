/** The EndpointExport object, as its CRD (crd.yaml) serves it. */
import type { Condition, ObjectMeta } from "../../../src/api/common.ts";

/** `status` of an EndpointExport. */
export interface EndpointExportStatus {
  readonly observedGeneration?: number;
  readonly phase?: string;
  /** The machine state (e.g. `published`), read back by the next step. */
  readonly state?: string;
  readonly endpoint?: string;
  readonly conditions?: readonly Condition[];
}

/** An EndpointExport: publish the API endpoint of Cluster `spec.clusterRef.name` as a ConfigMap. */
export interface EndpointExport {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
  readonly spec: { readonly clusterRef: { readonly name: string }; readonly configMapName?: string };
  readonly status?: EndpointExportStatus;
}

/** The ConfigMap an export writes. */
export function configMapNameOf(object: EndpointExport): string {
  return object.spec.configMapName ?? `${object.metadata.name}-endpoint`;
}
