import type { ClusterResult } from './types';

/**
 * A value read from the cluster once and kept: callers that ask while the read is under way share
 * it, a failure is not kept (the next call asks again), `force` reads anew. While a forced read is
 * under way (the user asked to refresh, a kind was missing), every caller waits for it rather than
 * getting the value that is being replaced: "not served" must not outlive a Refresh.
 */
export class SharedLoad<T> {
  private value: T | undefined;
  private loading: Promise<ClusterResult<T>> | undefined;

  constructor(private readonly read: () => Promise<ClusterResult<T>>) {}

  cached(): T | undefined {
    return this.value;
  }

  load(force = false): Promise<ClusterResult<T>> {
    if (this.value !== undefined && !force && !this.loading) return Promise.resolve({ ok: true, value: this.value });
    this.loading ??= this.read().then((result) => {
      this.loading = undefined;
      if (result.ok) this.value = result.value;
      return result;
    });
    return this.loading;
  }
}
