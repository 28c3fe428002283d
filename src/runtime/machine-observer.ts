/** A window on the interpreted machines: who stepped, with which event, from which state to which. */
import type { AnyStateMachine } from "xstate";

/** One committed step of one resource's machine. */
export interface InterpretedStep {
  /** The resource kind, e.g. `Cluster`. */
  readonly kind: string;
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  /** The machine that interprets this kind (its definition, for inspectors). */
  readonly machine: AnyStateMachine;
  /** The event fed to the machine (level-based facts; never secrets). */
  readonly event: { readonly type: string };
  /** State before and after, as persisted (`deleting.releasing`). */
  readonly before: string;
  readonly after: string;
  /** When (ms since epoch, from the runtime's clock). */
  readonly at: number;
}

/** Told about every committed step and every resource that went away; must be cheap and must not throw. */
export interface MachineObserver {
  stepped(step: InterpretedStep): void;
  removed(kind: string, uid: string): void;
}
