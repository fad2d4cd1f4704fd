// Small questions about paths that the renderers, the command line and the editor all ask. They
// never throw: a path that cannot be looked at is neither a file nor a folder.
import * as fs from 'node:fs';
import * as path from 'node:path';

export function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export function isRegularFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Whether `p`, with every link followed, is `dir` or below it; false when either is not there. */
export function isInsideReally(p: string, dir: string): boolean {
  try {
    const real = fs.realpathSync(p);
    const top = fs.realpathSync(dir);
    return real === top || real.startsWith(`${top}${path.sep}`);
  } catch {
    return false;
  }
}

/** The entries of the folder `dir`; none when it cannot be read. */
export function folderEntries(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** The platform's separators as `/`: source maps and file kinds speak `/`-separated paths. */
export function toSlashes(p: string): string {
  return p.split(path.sep).join('/');
}
