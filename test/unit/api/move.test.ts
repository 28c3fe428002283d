/** What a move leaves on objects: the pause, and the identity that names and backend keys keep across moves. */
import { describe, expect, it } from "vitest";
import { IDENTITY_ANNOTATION, identityUid, isPaused, PAUSED_ANNOTATION } from "../../../src/api/move.ts";
import { accessRequestIdentity, serviceAccountName } from "../../../src/machines/access-request/names.ts";
import { backendTarget } from "../../../src/machines/backend-cluster/backend-cluster.ts";

const moved = { uid: "uid-b", namespace: "team", name: "x", annotations: { [IDENTITY_ANNOTATION]: "uid-a" } };

describe("a moved object", () => {
  it('is paused only by the annotation\'s "true"', () => {
    expect(isPaused({ metadata: { annotations: { [PAUSED_ANNOTATION]: "true" } } })).toBe(true);
    expect(isPaused({ metadata: { annotations: { [PAUSED_ANNOTATION]: "false" } } })).toBe(false);
    expect(isPaused({ metadata: {} })).toBe(false);
  });

  it("keeps its first incarnation's uid as its identity; an object never moved is its own", () => {
    expect(identityUid(moved)).toBe("uid-a");
    expect(identityUid({ uid: "uid-b" })).toBe("uid-b");
  });

  it("keeps its backend key and the names of its access objects", () => {
    const first = { ...moved, uid: "uid-a", annotations: {} };
    expect(
      backendTarget({ metadata: moved, spec: { profile: "p" } }, "Exclusive", undefined, undefined).uid,
    ).toBe("uid-a");
    expect(serviceAccountName(accessRequestIdentity({ metadata: moved }))).toBe(
      serviceAccountName(accessRequestIdentity({ metadata: first })),
    );
  });
});
