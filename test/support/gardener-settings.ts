/** Settings of the gardener backend for tests: a garden in Secret `ns/garden`, project `dev`, Shoots of the `local` provider. */
import type { JsonObject } from "../../src/api/common.ts";
import { type GardenerSettings, gardenerSettings } from "../../src/providers/gardener-settings.ts";

/** What a test adds to the Shoot template: more of its `spec`, and its `metadata`. */
export interface LocalShootTemplate {
  readonly spec?: JsonObject;
  readonly metadata?: JsonObject;
}

/** The settings of ProviderConfig `gardener` for a local garden, its Shoot template the `local` provider's plus `more`. */
export function localGardenerSettings(more: LocalShootTemplate = {}): GardenerSettings {
  return gardenerSettings(
    {
      kubeconfigSecretRef: { namespace: "ns", name: "garden" },
      project: "dev",
      shootTemplate: {
        ...(more.metadata ? { metadata: more.metadata } : {}),
        spec: { cloudProfile: { name: "local" }, region: "local", provider: { type: "local" }, ...more.spec },
      },
    },
    "gardener",
  );
}
