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
