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

/** A step as both controllers' pure steps report it. */
interface ReportedStep {
  readonly event: { readonly type: string } | undefined;
  readonly previousState: string;
  readonly state: string;
}

/** Tells every observer about the committed steps of one resource (steps without an event are skipped). */
export function tellObservers(
  observers: readonly MachineObserver[] | undefined,
  resource: {
    readonly kind: string;
    readonly machine: AnyStateMachine;
    readonly metadata: { readonly uid?: string; readonly namespace?: string; readonly name?: string };
  },
  steps: readonly ReportedStep[],
  at: number,
): void {
  for (const step of steps) {
    if (!step.event) continue;
    for (const observer of observers ?? []) {
      observer.stepped({
        kind: resource.kind,
        uid: resource.metadata.uid ?? "",
        namespace: resource.metadata.namespace ?? "",
        name: resource.metadata.name ?? "",
        machine: resource.machine,
        event: step.event,
        before: step.previousState,
        after: step.state,
        at,
      });
    }
  }
}
