/** State values as the one-line strings persisted in status (`deleting.releasing`), and back. */
import type { StateValue } from "xstate";

/** `{ deleting: "releasing" }` → `deleting.releasing`; parallel states are not used by our machines. */
export function stateValueToString(value: StateValue): string {
  if (typeof value === "string") return value;
  const [key, child] = Object.entries(value)[0] ?? ["", undefined];
  return child === undefined ? key : `${key}.${stateValueToString(child as StateValue)}`;
}

/** `deleting.releasing` → `{ deleting: "releasing" }`. */
export function parseStateValue(text: string): StateValue {
  const [head = "", ...rest] = text.split(".");
  return rest.length === 0 ? head : { [head]: parseStateValue(rest.join(".")) };
}
