/** What `explain` tells a person on call about one object of any kind, computed from the object alone. */

/** An object's situation in words. */
export interface Explanation {
  /** The machine state, or `undefined` when no engine has written one. */
  readonly state: string | undefined;
  readonly phase: string | undefined;
  /** Why it is where it is: the conditions or facts that hold it there, most telling first. */
  readonly why: readonly string[];
  /** What has to happen for it to move on, and who does it. */
  readonly waitingFor: readonly string[];
}

/** Each condition in words (`Ready=False (Reason): message`), for a kind whose conditions say why. */
export function conditionsInWords(
  conditions: readonly { type: string; status: string; reason?: string; message?: string }[] | undefined,
): string[] {
  return (conditions ?? []).map((c) => `${c.type}=${c.status} (${c.reason}): ${c.message}`);
}
