/** What the engine knows of a machine-backed kind without running it: its resource, machine, statechart and words. */
import type { AnyStateMachine } from "xstate";

/** The pure half of a kind; the runtime adds how facts are gathered and commands run. */
export interface MachineDefinition {
  /** The Kubernetes kind, e.g. `Cluster`. */
  readonly kind: string;
  readonly apiVersion: string;
  readonly resource: {
    readonly group: string;
    readonly version: string;
    readonly plural: string;
    readonly namespaced: boolean;
  };
  /** What a person may type for it (`explain cluster …`), lower case. */
  readonly names: readonly string[];
  readonly machine: AnyStateMachine;
  /** The statechart files: `docs/statecharts/<file>.{json,mmd,svg}`, generated from `source`. */
  readonly statechart: { readonly file: string; readonly source: string };
  /** Every guard of the machine in words, for `explain`. */
  readonly guardPhrases: Readonly<Record<string, string>>;
}

/** What a kind says of itself; {@link machineDefinition} derives the rest by the engine's conventions. */
export interface MachineKindProps {
  readonly resource: MachineDefinition["resource"];
  /** Names besides the kind and its plural, as the CRD's `shortNames` lists them. */
  readonly shortNames?: readonly string[];
  readonly machine: AnyStateMachine;
  readonly guardPhrases: MachineDefinition["guardPhrases"];
}

/**
 * The definition of `kind` by the engine's conventions, so that no kind can state them differently: its
 * `apiVersion` is its resource's group and version; a person types it lower case, as its plural or by a short
 * name; its statechart files are named after the machine's id, generated from
 * `src/machines/<kind in kebab case>/machine.ts`.
 */
export function machineDefinition(kind: string, props: MachineKindProps): MachineDefinition {
  const folder = kind.replace(/(?<=[a-z])(?=[A-Z])/g, "-").toLowerCase();
  return {
    kind,
    apiVersion: `${props.resource.group}/${props.resource.version}`,
    resource: props.resource,
    names: [kind.toLowerCase(), props.resource.plural, ...(props.shortNames ?? [])],
    machine: props.machine,
    statechart: { file: props.machine.id, source: `src/machines/${folder}/machine.ts` },
    guardPhrases: props.guardPhrases,
  };
}
