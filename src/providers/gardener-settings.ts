/** The `gardener` backend's ProviderConfig settings: which garden, which project, which Shoot template. Pure. */
import type { JsonObject } from "../api/common.ts";
import { type KubeconfigSecretRef, kubeconfigSecretRef } from "./shared/kubeconfig-secret.ts";
import { isObject, type SettingsFailure, settingsFailure, stringMap } from "./shared/settings.ts";

/** `spec.settings` of a ProviderConfig with `backend: gardener`, validated. */
export interface GardenerSettings {
  /** The Secret holding the garden's kubeconfig (`settings.kubeconfigSecretRef`, as for `existing`). */
  readonly garden: KubeconfigSecretRef;
  /** The Gardener project the Shoots go into (`settings.project`). */
  readonly project: string;
  /** `settings.shootTemplate.spec`: a Shoot's spec (cloudProfile, region, provider, …); the version is set per Cluster. */
  readonly template: JsonObject;
  /** `settings.shootTemplate.metadata.labels` / `.annotations`, put on every Shoot. */
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

const example =
  "settings: { kubeconfigSecretRef: { namespace: <ns>, name: <secret> }, project: <project>, shootTemplate: { spec: { cloudProfile: { name: <profile> }, region: <region>, provider: { type: <type> } } } }";

/** Reads and checks `settings`; throws a message naming the ProviderConfig and what to write. */
export function gardenerSettings(settings: JsonObject | undefined, providerConfig: string): GardenerSettings {
  const fail: SettingsFailure = settingsFailure(providerConfig, example);
  const garden = kubeconfigSecretRef(settings, providerConfig);
  const project = settings?.project;
  if (typeof project !== "string" || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(project) || project.length > 10)
    fail(
      `settings.project must name a Gardener project (lowercase, at most 10 characters), not ${JSON.stringify(project)}`,
    );
  const shootTemplate = settings?.shootTemplate;
  if (!isObject(shootTemplate) || !isObject(shootTemplate.spec))
    fail("settings.shootTemplate.spec must be an object (the spec of a Shoot)");
  const template = (shootTemplate as JsonObject).spec as JsonObject;
  if (!isObject(template.cloudProfile) || typeof template.cloudProfile.name !== "string")
    fail("settings.shootTemplate.spec.cloudProfile.name must name the CloudProfile");
  const metadata = isObject((shootTemplate as JsonObject).metadata)
    ? ((shootTemplate as JsonObject).metadata as JsonObject)
    : {};
  return {
    garden,
    project: project as string,
    template,
    labels: stringMap(metadata.labels, "settings.shootTemplate.metadata.labels", fail),
    annotations: stringMap(metadata.annotations, "settings.shootTemplate.metadata.annotations", fail),
  };
}

/** The CloudProfile a template names. */
export function templateCloudProfile(settings: GardenerSettings): string {
  return (settings.template.cloudProfile as JsonObject).name as string;
}
