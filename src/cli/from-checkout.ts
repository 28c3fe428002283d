/**
 * Loading a development module that only a checkout of the repository has (`src/dev`: stand-ins for Gardener,
 * Cluster API and an identity provider); the package leaves them out, so a command that needs one says so.
 */

/** A command needs a development module the installed package does not have. */
export class CheckoutNeededError extends Error {
  constructor(what: string, options?: ErrorOptions) {
    super(
      `${what} needs a checkout of the openmcp-engine repository: it runs development stand-ins (src/dev) that the package does not ship`,
      options,
    );
    this.name = "CheckoutNeededError";
  }
}

/** Runs `load` (a dynamic import of a `src/dev` module); when that module is absent, a {@link CheckoutNeededError} naming `what`. */
export async function loadFromCheckout<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND")
      throw new CheckoutNeededError(what, { cause: error });
    throw error;
  }
}
