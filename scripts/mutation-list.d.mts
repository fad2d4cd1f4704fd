/** One planted fault: `from` (which occurs exactly once in `file`) replaced by `to`, and the tests that must fail. */
export interface Mutation {
  readonly id: string;
  /** The server's behaviour the fault breaks. */
  readonly rule: string;
  /** Relative to the repository root. */
  readonly file: string;
  readonly from: string;
  readonly to: string;
  /** Test files, relative to the repository root. */
  readonly tests: readonly string[];
}

export const mutations: readonly Mutation[];
