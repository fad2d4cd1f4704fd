// One answer made from the cluster layer's caches and kept: the ValidatingAdmissionPolicies of a
// namespace, the admission webhooks, a namespace's LimitRanges and ResourceQuotas, its autoscalers.
// Made again when what it is made of changes (a watch event: readAgain), or when its reader asks
// for a fresh one; an answer made again that is the same (by `signatureOf`) keeps the first object,
// since the editor compares facts by identity (lsp/document-analysis.ts sameFacts), and only a
// different one tells `changed`. A change that lands while an answer is being made may have come
// after the part that read it: another is made when that one is done.

export class KeptAnswer<T> {
  private facts: T | undefined;
  private signature = '';
  private reading: Promise<T> | undefined;
  private again = false;
  private at = 0;

  constructor(
    private readonly make: () => Promise<T>,
    private readonly signatureOf: (answer: T) => string,
    private readonly changed: () => void,
  ) {}

  /** The answer as last made (undefined before the first). */
  get known(): T | undefined {
    return this.facts;
  }

  /** When the last answer was made (ms since the epoch; 0 before the first). */
  get madeAt(): number {
    return this.at;
  }

  /** Whether an answer is being made now. */
  get busy(): boolean {
    return this.reading !== undefined;
  }

  /** The answer once made: the one known, or the first (or the one being made). */
  answer(): Promise<T> {
    return this.facts !== undefined && !this.reading ? Promise.resolve(this.facts) : this.fresh();
  }

  /** The answer being made, or a new one. */
  fresh(): Promise<T> {
    this.reading ??= this.make().then(
      (facts) => {
        this.reading = undefined;
        this.at = Date.now();
        const signature = this.signatureOf(facts);
        const news = this.facts === undefined || signature !== this.signature;
        if (news) this.facts = facts;
        this.signature = signature;
        if (news) this.changed();
        if (this.again) this.readAgain();
        return this.facts!;
      },
      (e: unknown) => {
        this.reading = undefined;
        throw e;
      },
    );
    return this.reading;
  }

  /** What the answer is made of changed: made again, if it was ever asked for. */
  readAgain(): void {
    if (this.facts === undefined && !this.reading) return;
    this.again = this.reading !== undefined;
    if (!this.reading) void this.fresh();
  }
}
