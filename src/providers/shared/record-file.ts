/**
 * What a backend remembers per Cluster, kept in one JSON file of its state folder (`{ "<list>": [record, …] }`),
 * so a restarted engine finds what an earlier one made, also when the Cluster's ProviderConfig is gone.
 *
 * Guarantees: the file is written whole and atomically on every change, and only when something changed; records
 * are keyed by the Cluster's uid. A file that does not parse throws at load (never silently forgotten).
 */
import { readFileSync } from "node:fs";
import { writeFileAtomicallySync } from "../../util/atomic-file.ts";

/** A backend's records, in memory and in `path`. */
export class RecordFile<R extends { readonly uid: string }> {
  readonly #path: string;
  readonly #list: string;
  readonly #records = new Map<string, R>();

  /** Loads `path` (none yet: no records); `list` is the key the records are listed under in the file. */
  constructor(path: string, list: string) {
    this.#path = path;
    this.#list = list;
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      return; // nothing recorded yet
    }
    const parsed = JSON.parse(text) as Record<string, R[] | undefined>;
    for (const record of parsed[list] ?? []) this.#records.set(record.uid, record);
  }

  get(uid: string): R | undefined {
    return this.#records.get(uid);
  }

  has(uid: string): boolean {
    return this.#records.has(uid);
  }

  /** Every record. */
  values(): R[] {
    return [...this.#records.values()];
  }

  /** How many records there are. */
  get size(): number {
    return this.#records.size;
  }

  /** Records `record` (replacing the one with its uid); writes only when it differs from what is known. */
  put(record: R): void {
    const known = this.#records.get(record.uid);
    if (known && JSON.stringify(known) === JSON.stringify(record)) return;
    this.#records.set(record.uid, record);
    this.#save();
  }

  /** Forgets the record of `uid`, if there is one. */
  remove(uid: string): void {
    if (this.#records.delete(uid)) this.#save();
  }

  #save(): void {
    writeFileAtomicallySync(
      this.#path,
      JSON.stringify({ [this.#list]: [...this.#records.values()] }, null, 2),
    );
  }
}
