/** The kind create lifecycle's decisions, from what the backend observed: no processes, no files. */
import { describe, expect, it } from "vitest";
import {
  CREATE_ATTEMPTS,
  type CreateSeen,
  type CreateState,
  createStateOf,
  creatingObservation,
  deletePlan,
  mayStartCreate,
  nextCreateStep,
} from "../../../../src/providers/kind/create-lifecycle.ts";

const NOW = 1_000_000;
const DELAY = 30_000;

/** A create seen with `exit` (its status, `running`, or none), from a record of `attempt`. */
const seen = (exit: string | undefined, fields: Partial<CreateSeen> = {}): CreateSeen => ({
  record: {},
  inLine: false,
  exit,
  exitedAt: NOW - 1_000,
  stderr: () => "ERROR: failed to create cluster",
  ...fields,
});

describe("where a create is", () => {
  it("reads the exit status: running, succeeded, interrupted (gone with none)", () => {
    expect(createStateOf(seen("running"), NOW, DELAY)).toEqual({ kind: "running" });
    expect(createStateOf(seen("0"), NOW, DELAY)).toEqual({ kind: "succeeded" });
    expect(createStateOf(seen(undefined), NOW, DELAY)).toEqual({ kind: "interrupted" });
  });

  it("takes an adopted cluster for created, whatever its folder holds", () => {
    expect(createStateOf(seen(undefined, { record: { adopted: true } }), NOW, DELAY)).toEqual({
      kind: "succeeded",
    });
  });

  it("is queued while this instance holds it in line; queued by a gone instance, it was interrupted", () => {
    const queued = { record: { queued: true } };
    expect(createStateOf(seen(undefined, { ...queued, inLine: true }), NOW, DELAY)).toEqual({
      kind: "queued",
    });
    expect(createStateOf(seen(undefined, queued), NOW, DELAY)).toEqual({ kind: "interrupted" });
  });

  it("waits before trying a failed create again, twice as long after each try, and reads stderr only then", () => {
    let reads = 0;
    const stderr = () => {
      reads++;
      return "ERROR: boom";
    };
    expect(createStateOf(seen("running", { stderr }), NOW, DELAY).kind).toBe("running");
    expect(reads).toBe(0);
    const first = createStateOf(seen("1", { stderr }), NOW, DELAY);
    expect(first).toEqual({
      kind: "backoff",
      message: "kind create cluster exited with 1: ERROR: boom",
      retryAt: NOW - 1_000 + DELAY,
    });
    const third = seen("1", { stderr, record: { attempt: 3 }, exitedAt: NOW - 4 * DELAY });
    expect(createStateOf(third, NOW, DELAY)).toEqual({
      kind: "retry",
      message: "kind create cluster exited with 1: ERROR: boom",
    });
    expect(createStateOf({ ...third, exitedAt: NOW - 3 * DELAY }, NOW, DELAY).kind).toBe("backoff");
  });

  it("fails for good after the last try", () => {
    const last = seen("2", { record: { attempt: CREATE_ATTEMPTS }, stderr: () => "" });
    expect(createStateOf(last, NOW, DELAY)).toEqual({
      kind: "failed",
      message: `kind create cluster exited with 2 (try ${CREATE_ATTEMPTS} of ${CREATE_ATTEMPTS}); delete the Cluster to clean up, then create it again`,
    });
  });
});

describe("what a create call does next", () => {
  const named = false;

  it("starts over after an interrupted create (the same try) and after a failed one (the next try)", () => {
    expect(nextCreateStep({ record: { attempt: 2 }, state: { kind: "interrupted" }, named })).toEqual({
      kind: "start",
      attempt: 2,
      leftovers: "interrupted",
    });
    expect(nextCreateStep({ record: { attempt: 2 }, state: { kind: "retry", message: "m" }, named })).toEqual(
      {
        kind: "start",
        attempt: 3,
        lastFailure: "m",
        leftovers: "failed",
      },
    );
  });

  it("leaves a create alone that is queued, running, waiting to try again or failed", () => {
    const states: CreateState[] = [
      { kind: "queued" },
      { kind: "running" },
      { kind: "backoff", message: "m", retryAt: NOW },
      { kind: "failed", message: "m" },
    ];
    for (const state of states)
      expect(nextCreateStep({ record: {}, state, named })).toEqual({ kind: "wait" });
  });

  it("asks kind whether the cluster exists before it makes, completes, adopts or refuses", () => {
    const created = { record: {}, state: { kind: "succeeded" } as const, named };
    expect(nextCreateStep(created)).toEqual({ kind: "look" });
    expect(nextCreateStep({ named })).toEqual({ kind: "look" });
    expect(nextCreateStep({ ...created, listed: true })).toEqual({ kind: "complete" });
    expect(nextCreateStep({ ...created, listed: false })).toEqual({ kind: "start", attempt: 1 });
    expect(nextCreateStep({ named, listed: false })).toEqual({ kind: "start", attempt: 1 });
    expect(nextCreateStep({ named: true, listed: true })).toEqual({ kind: "adopt" });
    expect(nextCreateStep({ named, listed: true })).toEqual({ kind: "refuse" });
  });
});

describe("waiting in line for a slot", () => {
  it("starts a create only with a free slot and none waiting before it", () => {
    expect(mayStartCreate(0, 1, 2)).toBe(true);
    expect(mayStartCreate(0, 2, 2)).toBe(false);
    expect(mayStartCreate(1, 0, 2)).toBe(false);
    expect(mayStartCreate(0, 100, Number.POSITIVE_INFINITY)).toBe(true);
  });
});

describe("what observe reports while a create has not succeeded", () => {
  const record = { cluster: "c.12345678", version: "1.34.0", image: "kindest/node:v1.34.0" };
  const known = { exists: true, version: "1.34.0", info: "kind cluster c.12345678 (kindest/node:v1.34.0)" };
  const line = () => ({ position: 2, waiting: 3, parallelCreates: 1 });

  it("absent after a failed or interrupted create: the engine orders it again", () => {
    expect(creatingObservation({ kind: "interrupted" }, record, NOW, line)).toEqual({ exists: false });
    expect(creatingObservation({ kind: "retry", message: "m" }, record, NOW, line)).toEqual({
      exists: false,
    });
  });

  it("provisioning while running, saying why the last try failed", () => {
    expect(creatingObservation({ kind: "running" }, record, NOW, line)).toEqual({
      ...known,
      phase: "provisioning",
    });
    const retrying = { ...record, attempt: 2, lastFailure: "boom" };
    expect(creatingObservation({ kind: "running" }, retrying, NOW, line)).toEqual({
      ...known,
      phase: "provisioning",
      message: `try 2 of ${CREATE_ATTEMPTS}; the last failed: boom`,
    });
  });

  it("provisioning while it waits to try again, or in line", () => {
    const backoff = { kind: "backoff", message: "boom", retryAt: NOW + 2_500 } as const;
    expect(creatingObservation(backoff, record, NOW, line)).toMatchObject({
      phase: "provisioning",
      message: `try 1 of ${CREATE_ATTEMPTS} failed, trying again in 3 s: boom`,
    });
    expect(creatingObservation({ kind: "queued" }, record, NOW, line)).toMatchObject({
      phase: "provisioning",
      message: expect.stringMatching(/1 kind create\(s\) run at once .*, 2 of 3 waiting$/),
    });
  });

  it("failed after the last try; nothing to say once it succeeded", () => {
    expect(creatingObservation({ kind: "failed", message: "m" }, record, NOW, line)).toEqual({
      ...known,
      phase: "failed",
      message: "m",
    });
    expect(creatingObservation({ kind: "succeeded" }, record, NOW, line)).toBeUndefined();
  });
});

describe("what a delete stops", () => {
  it("forgets an adopted cluster, and stops a running create and MetalLB install of its own", () => {
    expect(deletePlan({ adopted: true }, { kind: "running" }, { kind: "running" })).toEqual({
      kind: "forget",
    });
    expect(deletePlan({}, { kind: "running" }, { kind: "running" })).toEqual({
      kind: "remove",
      stop: ["create", "metallb"],
    });
    expect(deletePlan(undefined, undefined, { kind: "absent" })).toEqual({ kind: "remove", stop: [] });
    expect(deletePlan({}, { kind: "queued" }, { kind: "succeeded" })).toEqual({ kind: "remove", stop: [] });
  });
});
