/** The seam every write of a machine-backed kind goes through (see machine-controller.ts). */
import type { PatchOperation } from "../machines/shared/json-patch.ts";
import type { PatchTarget, RemoveTarget } from "./api-server/patch-object.ts";
import type { EventRecord, EventSubject } from "./event-recorder.ts";

/**
 * What the controller writes with: guarded patches of its objects, and Events about them. The engine's
 * writes to the API server (the default); a test hands in one that keeps everything in memory.
 */
export interface MachineWriter {
  /**
   * Sends `operations` (never empty) as one patch of the object or its status, guarded by
   * `target.resourceVersion`; resolves to the object as stored now. Throws a `ConflictError` when the
   * object changed since, a `GoneError` when it no longer exists.
   */
  patch(
    target: PatchTarget,
    operations: readonly PatchOperation[],
    subresource: "status" | undefined,
  ): Promise<unknown>;
  /**
   * Deletes an object a command is done with (e.g. a hand-over Secret), only while it is the one of
   * `target.uid`; resolves when it is gone, whether or not this call deleted it.
   */
  remove(target: RemoveTarget): Promise<void>;
  /** Hands an Event about `subject` over to be written in the background. */
  record(subject: EventSubject, event: EventRecord, now: Date): void;
}
