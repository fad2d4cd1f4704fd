// Whether the kubeconfig a session was made from has changed since: a cluster that came back on a
// new port, a rotated certificate, a context renamed. Each session remembers what its files were
// (inode, size, modification time, or absence) and the folders holding them are watched, since a
// kubeconfig is often rewritten by renaming a new file over it. A change is checked against what
// was remembered before the session is replaced, so an unrelated file in ~/.kube costs a few stats.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What the files looked like: compared, never shown. */
export function fingerprintOf(files: readonly string[]): string {
  return files
    .map((file) => {
      try {
        const st = fs.statSync(file);
        return `${file}\u0000${st.ino}\u0000${st.size}\u0000${st.mtimeMs}`;
      } catch {
        return `${file}\u0000absent`;
      }
    })
    .join('\u0001');
}

/** Calls `changed` (at most once per burst of events) when a file of `files` may have changed. */
export function watchFiles(files: readonly string[], changed: () => void): { dispose(): void } {
  const names = new Map<string, Set<string>>();
  for (const file of files) {
    const dir = path.dirname(file);
    names.set(dir, (names.get(dir) ?? new Set()).add(path.basename(file)));
  }
  let timer: NodeJS.Timeout | undefined;
  const later = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      changed();
    }, 100);
    timer.unref();
  };
  const watchers: fs.FSWatcher[] = [];
  for (const [dir, inDir] of names) {
    try {
      const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || inDir.has(String(name))) later();
      });
      watcher.on('error', () => watcher.close());
      watchers.push(watcher);
    } catch {
      // A folder that does not exist or cannot be watched: Refresh still reads the files again.
    }
  }
  return {
    dispose() {
      if (timer) clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}
