/** Checking an object's status conditions the way every kind's tests do: one condition, by the fields that matter. */
import { expect } from "vitest";
import type { Condition } from "../../src/api/common.ts";

/** Checks that `object` has a status condition with (at least) the fields of `wanted`. */
export function expectCondition(
  object: { readonly status?: { readonly conditions?: readonly Condition[] } } | undefined,
  wanted: Partial<Condition>,
): void {
  expect(object?.status?.conditions).toContainEqual(expect.objectContaining(wanted));
}

/** The status condition of `type` on `object`, if it has one. */
export const conditionOf = (
  object: { readonly status?: { readonly conditions?: readonly Condition[] } } | undefined,
  type: string,
): Condition | undefined => object?.status?.conditions?.find((c) => c.type === type);
