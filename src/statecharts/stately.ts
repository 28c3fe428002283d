/** A machine's config as JSON for Stately Studio: what `createMachine()` was given, minus the functions. */
import type { AnyStateMachine } from "xstate";

/**
 * The machine's config as XState keeps it (`machine.config`), as indented JSON. States, `on`, `always`,
 * guard and action names, descriptions and static params survive; functions (dynamic action params) are left
 * out, as `JSON.stringify` does, and implementations live in `setup()` anyway. Not `machine.toJSON()`: that
 * resolved definition is not a config Studio imports, and XState 5.33 leaves the `always` transitions out of it.
 */
export function statelyJson(machine: AnyStateMachine): string {
  return `${JSON.stringify(machine.config, null, 2)}\n`;
}
