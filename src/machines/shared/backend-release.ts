/**
 * The deleting sub-chart every kind shares that holds a cluster at the backend (Cluster, EngineCluster):
 * blocked while others hold finalizers → releasing (the backend deletes) → released (our finalizer goes).
 * The kind's machine must name the guards `withoutOurFinalizer`, `noForeignFinalizers`, `backendAbsent`,
 * `backendNotDeleting` and the actions `removeFinalizer`, `recordEvent` and those of `releasing`.
 */
import { recordEvent } from "./actions-as-data.ts";
import { REQUEUE } from "./machine-tags.ts";

/** What differs between kinds: the words, and what `releasing` orders (e.g. `deleteCluster`). */
export interface BackendRelease<Entry extends readonly string[]> {
  /** The object, as `blocked`'s description names it (e.g. `Cluster`). */
  readonly kind: string;
  /** What `releasing` does, in words. */
  readonly releasing: string;
  /** The actions `releasing` runs on entry. */
  readonly entry: Entry;
}

/** The `initial` and `states` of a `deleting` state. */
export function backendRelease<const Entry extends readonly string[]>(release: BackendRelease<Entry>) {
  return {
    initial: "blocked",
    states: {
      blocked: {
        description: `Others still hold finalizers on the ${release.kind}; its infrastructure must stay.`,
        always: [
          { guard: "withoutOurFinalizer", target: "released" },
          { guard: "noForeignFinalizers", target: "releasing" },
        ],
      },
      releasing: {
        description: release.releasing,
        tags: [REQUEUE.poll],
        entry: release.entry,
        on: {
          // Only an observation made after the delete was ordered may release: never in the step that ordered it.
          observed: [
            { guard: "backendAbsent", target: "released" },
            { guard: "backendNotDeleting", target: "releasing", reenter: true },
          ],
        },
      },
      released: {
        description: "Nothing is left at the backend; our finalizer goes.",
        type: "final",
        entry: [
          "removeFinalizer",
          recordEvent({ type: "Normal", reason: "Deleted", message: "The cluster is gone" }),
        ],
      },
    },
  } as const;
}
