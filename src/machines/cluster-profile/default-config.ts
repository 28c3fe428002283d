/**
 * The ProviderConfig `init` makes when nobody applied one: openMCP's bootstrapper deploys a provider with
 * only an image (and for kind the Docker socket) and expects its profile (`kind`) to exist. Pure: which
 * config, if any; runtime/start/init.ts creates it.
 */

import { PROVIDER_CONFIG_ANNOTATIONS } from "../../api/constants/provider-config.ts";
import { ENGINE_API_VERSION } from "../../api/constants.ts";
import type { ProviderConfig } from "../../api/provider-config.ts";
import { configOwnership } from "./ownership.ts";
import type { ProfileOwner } from "./profile.ts";

/** The environment variables that shape the default config. */
export const DEFAULT_CONFIG_ENV = {
  /** `false` turns the default config off (default `true`). */
  enabled: "OPENMCP_ENGINE_DEFAULT_CONFIG",
  /** Its `spec.backend` when `--backend` names no built-in backend. */
  backend: "OPENMCP_ENGINE_DEFAULT_BACKEND",
  /** Its `spec.profileName` (default: the provider name). */
  profile: "OPENMCP_ENGINE_DEFAULT_PROFILE",
} as const;

/** The value of {@link PROVIDER_CONFIG_ANNOTATIONS.madeBy} on the default config. */
export const MADE_BY_INIT = "init";

/** Built-in backends that make clusters without any settings: a provider named like one gets it by default. */
export const SETTINGLESS_BACKENDS: readonly string[] = ["kind", "local", "simulated"];

/** What the decision reads. */
export interface DefaultConfigInput {
  /** This engine: its provider name and the backends it serves. */
  readonly owner: ProfileOwner;
  /** `--backend`, as given. */
  readonly backendFlag: string | undefined;
  /** Names of the built-in backends. */
  readonly builtIns: readonly string[];
  /** Every ProviderConfig there is. */
  readonly configs: readonly ProviderConfig[];
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The config to create, or why none is. */
export type DefaultConfigDecision = { readonly make: ProviderConfig } | { readonly skip: string };

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Decides the default ProviderConfig: none when turned off or when a ProviderConfig is ours or ours to
 * claim; else one named after the provider, claimed by it, publishing profile `OPENMCP_ENGINE_DEFAULT_PROFILE`
 * or the provider name, with backend `--backend` (if built-in), else `OPENMCP_ENGINE_DEFAULT_BACKEND`, else
 * the provider name if that names a built-in backend without settings; none when there is no such backend,
 * or when this engine does not serve it. A bad variable value throws, naming the variable.
 */
export function defaultProviderConfig(input: DefaultConfigInput): DefaultConfigDecision {
  const { owner, env } = input;
  const enabled = env[DEFAULT_CONFIG_ENV.enabled];
  if (enabled !== undefined && !["true", "false"].includes(enabled.toLowerCase()))
    throw new Error(`${DEFAULT_CONFIG_ENV.enabled} takes true or false, not "${enabled}"`);
  if (enabled?.toLowerCase() === "false")
    return { skip: `${DEFAULT_CONFIG_ENV.enabled} is false: no default ProviderConfig is made` };

  const held = input.configs.filter((config) => configOwnership(config, owner) !== "foreign");
  if (held.length > 0) {
    const names = held.map((config) => config.metadata.name ?? "").join(", ");
    return { skip: `ProviderConfigs of this provider exist (${names}): no default ProviderConfig is needed` };
  }

  const profileName = env[DEFAULT_CONFIG_ENV.profile] || owner.providerName;
  if (profileName.length > 253 || !DNS_SUBDOMAIN.test(profileName))
    throw new Error(
      `${DEFAULT_CONFIG_ENV.profile} "${profileName}" must be a DNS-1123 subdomain (lower case letters, digits, '-' and '.', at most 253 characters)`,
    );

  const { backendFlag, builtIns } = input;
  const fromEnv = env[DEFAULT_CONFIG_ENV.backend] || undefined;
  const backend =
    backendFlag !== undefined && builtIns.includes(backendFlag)
      ? backendFlag
      : (fromEnv ??
        (SETTINGLESS_BACKENDS.includes(owner.providerName) && builtIns.includes(owner.providerName)
          ? owner.providerName
          : undefined));
  if (backend === undefined)
    return {
      skip: `no ProviderConfig of this provider, and no backend for a default one: "${owner.providerName}" names no built-in backend that needs no settings (${SETTINGLESS_BACKENDS.join(", ")}); set ${DEFAULT_CONFIG_ENV.backend}, or apply a ProviderConfig`,
    };
  if (!owner.backends.includes(backend))
    return {
      skip: `the default ProviderConfig's backend "${backend}" is not one this engine runs (${owner.backends.join(", ")}): no default ProviderConfig is made`,
    };

  return {
    make: {
      apiVersion: ENGINE_API_VERSION,
      kind: "ProviderConfig",
      metadata: {
        name: owner.providerName,
        annotations: { [PROVIDER_CONFIG_ANNOTATIONS.madeBy]: MADE_BY_INIT },
      },
      spec: { providerRef: { name: owner.providerName }, profileName, backend },
    },
  };
}
