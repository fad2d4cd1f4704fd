// How the cluster layer's caches tell their listeners that something changed: each in turn, from a
// copy of the set (a listener may leave while it is told), and a listener that throws stops neither
// the others nor the cache that told it.

export function tell<T>(listeners: Iterable<(value: T) => void>, value: T): void {
  for (const listener of [...listeners]) {
    try {
      listener(value);
    } catch {
      // A listener's failure is its own.
    }
  }
}
