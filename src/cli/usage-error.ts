/** The error for a bad command line: printed with the command's usage, exit code 2. */

/** A flag or argument the command does not accept; {@link usage} tells what it does accept. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  readonly usage: string;
  constructor(message: string, usage: string) {
    super(message);
    this.usage = usage;
  }
}
