// The one place that says where the product keeps files between runs, and how: the compiled code
// of its bundles (compile-cache.ts) and the cluster's discovery and OpenAPI documents
// (cluster/api-cache.ts). What is read back is either run (bytecode) or believed (what a cluster
// serves), so it is read only from a place this user owns and nobody else can write:
//
// - the platform's cache directory, from the environment the process was started with, never from
//   a setting (a workspace must not be able to point it anywhere): XDG_CACHE_HOME when absolute,
//   else %LOCALAPPDATA% on Windows, ~/Library/Caches on macOS, ~/.cache elsewhere, and under it
//   `kube-conflict-hints/`;
// - every directory from `kube-conflict-hints/` down is this user's, mode 0700, and not a symbolic
//   link; a file is a regular file of this user's that no other user may write (0600 when made
//   here), opened without following a link, and never read past a limit;
// - a file is written beside its place under a name of its own and renamed over it, so a process
//   reading meanwhile reads all of it or nothing.
//
// Anything odd is the absence of a cache: no function here throws, and a failed write is silent.
// Only Node's own modules: launch/ runs before any bundle is loaded.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * `kube-conflict-hints/<name>` in the platform's cache directory, made if missing, or undefined
 * when no such directory can be had safely.
 */
export function userCacheDirectory(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  let base: string | undefined;
  try {
    if (xdg && path.isAbsolute(xdg)) base = xdg;
    else if (process.platform === 'win32') base = env.LOCALAPPDATA;
    else if (process.platform === 'darwin') base = path.join(os.homedir(), 'Library', 'Caches');
    else base = path.join(os.homedir(), '.cache');
  } catch {
    return undefined; // no home directory
  }
  if (!base || !path.isAbsolute(base)) return undefined;
  return ownDirectory(path.join(base, 'kube-conflict-hints'), name.split('/'));
}

/**
 * `parent/...parts`, each made with mode 0700 if missing; undefined unless `parent` and every part
 * is a directory of this user's that no other user can write (a symbolic link is not one).
 */
export function ownDirectory(parent: string, parts: readonly string[]): string | undefined {
  let dir = parent;
  try {
    for (const part of ['', ...parts]) {
      dir = part ? path.join(dir, part) : dir;
      if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (!ownedOnly(fs.lstatSync(dir), 'directory')) return undefined;
    }
    return dir;
  } catch {
    return undefined;
  }
}

/** A directory or regular file of this user's that no other user may write (always so on Windows). */
export function ownedOnly(stat: fs.Stats, kind: 'directory' | 'file'): boolean {
  if (kind === 'directory' ? !stat.isDirectory() : !stat.isFile()) return false;
  if (typeof process.getuid !== 'function') return true;
  return stat.uid === process.getuid() && (stat.mode & 0o022) === 0;
}

/** The bytes of `file` if it is this user's, nobody else could have written it, and it is at most `maxBytes`. */
export function readOwnFile(file: string, maxBytes: number): Buffer | undefined {
  let fd: number | undefined;
  try {
    const stat = fs.lstatSync(file, { throwIfNoEntry: false });
    if (!stat || !ownedOnly(stat, 'file') || stat.size > maxBytes) return undefined;
    // The file checked is the file read: a link put in its place between the two is not followed.
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    const opened = fs.fstatSync(fd);
    if (!ownedOnly(opened, 'file') || opened.ino !== stat.ino || opened.dev !== stat.dev || opened.size > maxBytes)
      return undefined;
    const data = Buffer.allocUnsafe(opened.size);
    let read = 0;
    while (read < data.length) {
      const n = fs.readSync(fd, data, read, data.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return read === data.length ? data : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Writes `file` (mode 0600) through a temporary file renamed over it; whether it was written. */
export function writeOwnFile(file: string, data: string | Buffer): boolean {
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  try {
    // `wx`: made here, never an existing file or a link someone left under that name.
    fs.writeFileSync(temporary, data, { mode: 0o600, flag: 'wx' });
    fs.renameSync(temporary, file);
    return true;
  } catch {
    try {
      fs.rmSync(temporary, { force: true });
    } catch {
      // nothing left to do: an odd leftover costs only its space
    }
    return false;
  }
}
