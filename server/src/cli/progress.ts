// Progress of a long check on the terminal: one line on stderr, rewritten in place and cleared
// before the results are printed. Only when stderr is a terminal: in CI logs, pipes and files a
// progress line would be noise (and carriage returns garble logs), so nothing extra is written.
import { printableLine } from './printable';

export interface CheckProgress {
  readonly file: number;
  readonly files: number;
  readonly objects: number;
}

export interface ProgressLine {
  update(progress: CheckProgress): void;
  /** Clears the line; call before anything else is written to the terminal. */
  finish(): void;
}

const quiet: ProgressLine = { update() {}, finish() {} };

export function terminalProgress(stream: NodeJS.WriteStream, intervalMs = 100): ProgressLine {
  if (!stream.isTTY) return quiet;
  let shown = false;
  let last = 0;
  return {
    update({ file, files, objects }) {
      const now = Date.now();
      // The first state at once, then at most ten a second: a fast check must not be slowed by drawing.
      if (shown && now - last < intervalMs) return;
      last = now;
      shown = true;
      const text = `kube-conflict-hints: checked ${objects} object${objects === 1 ? '' : 's'} (file ${file} of ${files})`;
      stream.write(`\r\x1b[2K${printableLine(text).slice(0, Math.max(20, (stream.columns || 80) - 1))}`);
    },
    finish() {
      if (shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}
