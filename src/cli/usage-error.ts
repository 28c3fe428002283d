/** The error for a bad command line: printed with the command's usage, exit code 2 (unless the command says otherwise). */

/** A flag or argument the command does not accept; {@link usage} tells what it does accept. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  readonly usage: string;
  /** The process's exit code: 2 unless the command gives 2 another meaning (`plan`: changes). */
  readonly exitCode: number;
  constructor(message: string, usage: string, exitCode = 2) {
    super(message);
    this.usage = usage;
    this.exitCode = exitCode;
  }
}
