/** Runs tasks one at a time per key (in arrival order), any number of keys at once. */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every earlier task of `key` has settled; resolves or rejects as it does. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    const result = before.then(task, task);
    const tail = result.catch(() => {});
    this.#tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
