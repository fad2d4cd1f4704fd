// How the command line finds and reads files, the way kubectl does (`kubectl apply -R -f DIR`; see
// docs/cli-input.md): a file named on the command line is read whatever its name; a directory is
// searched for names ending in exactly .yaml, .yml or .json, following links to files but not links
// to directories, and skipping hidden folders and node_modules (kubectl does not skip them). Where
// kubectl would hang or read without end (a FIFO, /dev/zero, a file of gigabytes) the check refuses
// the file with one line instead; so it does for a file with control characters, which kubectl's
// YAML reader refuses too. Every problem is a message, never an exception.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readSmallFile } from '../render/small-file';

/** Compared as kubectl compares them: `A.YAML` in a directory is not a manifest. */
export const manifestExtensions = ['.yaml', '.yml', '.json'];

/**
 * The largest file read. The API server takes at most 3 MiB per request; a file of many objects
 * can be larger, but one far beyond this is not a manifest anyone applies, and reading it would
 * take the memory of the machine.
 */
export const maxFileBytes = 32 * 1024 * 1024;

export type FileList = { ok: true; files: string[] } | { ok: false; message: string };

/** `-` on the command line: the standard input, as `kubectl apply -f -` reads it. */
export const stdinTarget = '-';
/** How findings name the standard input (as compilers do; kubectl says STDIN). */
export const stdinDisplayName = '<stdin>';

/** `stdin`: whether `-` may name the standard input (check reads it; snapshot does not). */
export function collectManifestFiles(targets: readonly string[], options: { stdin?: boolean } = {}): FileList {
  const files: string[] = [];
  for (const target of targets) {
    if (target === stdinTarget) {
      if (!options.stdin)
        return { ok: false, message: 'the standard input (-) is read by check only: save the manifests to a file' };
      if (files.includes(stdinTarget)) return { ok: false, message: 'the standard input (-) can be named only once' };
      files.push(stdinTarget);
      continue;
    }
    let stat: fs.Stats;
    try {
      stat = fs.statSync(target);
    } catch (e) {
      return { ok: false, message: `${describeFsError(e)}: ${target}` };
    }
    if (stat.isDirectory()) {
      const found = findManifestFiles(target);
      if (!found.ok) return found;
      if (found.files.length === 0)
        return {
          ok: false,
          message: `no manifests (${manifestExtensions.map((e) => `*${e}`).join(', ')}) under ${target}`,
        };
      files.push(...found.files);
    } else {
      const refused = refuseSpecial(target, stat);
      if (refused) return { ok: false, message: refused };
      files.push(target);
    }
  }
  // A file named twice (directly and through its folder) is checked once.
  const seen = new Set<string>();
  const key = (f: string) => (f === stdinTarget ? f : path.resolve(f));
  return { ok: true, files: files.filter((f) => !seen.has(key(f)) && seen.add(key(f))) };
}

/** The manifests under a directory (maybe none), in a stable order. */
export function findManifestFiles(dir: string): FileList {
  const files: string[] = [];
  const walked = walk(dir, files);
  return walked.ok ? { ok: true, files } : walked;
}

/** The first directory or link that cannot be read stops the walk. */
function walk(dir: string, out: string[]): { ok: true } | { ok: false; message: string } {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    return { ok: false, message: `cannot read the directory ${dir}: ${describeFsError(e)}` };
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const walked = walk(p, out);
      if (!walked.ok) return walked;
      continue;
    }
    // Anything else with a manifest's name is a manifest, a link to one included: kubectl reads
    // it, and a dangling link or a link to a directory is an error there too.
    if (!manifestExtensions.includes(path.extname(entry.name))) continue;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(p);
    } catch (e) {
      return {
        ok: false,
        message: `cannot read ${p}: ${entry.isSymbolicLink() ? `a link to a file that cannot be opened (${describeFsError(e)})` : describeFsError(e)}`,
      };
    }
    if (stat.isDirectory())
      return {
        ok: false,
        message: `cannot read ${p}: a link to a directory, named like a manifest (links to directories are not followed)`,
      };
    const refused = refuseSpecial(p, stat);
    if (refused) return { ok: false, message: refused };
    out.push(p);
  }
  return { ok: true };
}

/** Why a file is not read before it is opened: not a regular file, or too large. */
function refuseSpecial(file: string, stat: fs.Stats): string | undefined {
  if (!stat.isFile()) {
    return `${file} is ${kindOfFile(stat)}, not a regular file: not read (write the manifests to a file and check that)`;
  }
  if (stat.size > maxFileBytes) {
    return `${file} is larger than ${maxFileBytes / 1024 / 1024} MiB (${stat.size} bytes): not read`;
  }
  return undefined;
}

function kindOfFile(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'a special file';
}

export type FileText = { ok: true; text: string } | { ok: false; message: string };

/**
 * The text of a regular file of at most maxFileBytes. It is opened without blocking (a FIFO swapped
 * in after the check above must not hang the command) and read no further than the limit, however
 * the file grows. A control character (one YAML forbids: kubectl refuses the file with "yaml:
 * control characters are not allowed") is refused with its line and column, never the text around it.
 */
export function readTextFile(file: string): FileText {
  const read = readSmallFile(file, { maxBytes: maxFileBytes });
  if (read.ok) return decode(file, read.bytes);
  switch (read.refused) {
    case 'not-regular':
      return { ok: false, message: refuseSpecial(file, read.stat)! };
    case 'too-large':
      return {
        ok: false,
        message: `${file} is larger than ${maxFileBytes / 1024 / 1024} MiB${read.grew ? '' : ` (${read.size} bytes)`}: not read`,
      };
    case 'error':
      return { ok: false, message: `cannot read ${file}: ${describeFsError(read.error)}` };
  }
}

/**
 * The standard input, to its end, with the limits and checks of readTextFile. As kubectl, it waits
 * for the end of the input (Ctrl-D at a terminal).
 */
export function readStandardInput(input: NodeJS.ReadableStream = process.stdin): Promise<FileText> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const finish = (result: FileText) => {
      if (settled) return;
      settled = true;
      input.removeAllListeners('data');
      input.pause();
      resolve(result);
    };
    input.on('data', (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(bytes);
      total += bytes.length;
      if (total > maxFileBytes)
        finish({
          ok: false,
          message: `${stdinDisplayName} is larger than ${maxFileBytes / 1024 / 1024} MiB: not read`,
        });
    });
    input.once('end', () => finish(decode(stdinDisplayName, Buffer.concat(chunks, total))));
    input.once('error', (e: unknown) =>
      finish({ ok: false, message: `cannot read ${stdinDisplayName}: ${describeFsError(e)}` }),
    );
  });
}

function decode(file: string, bytes: Buffer): FileText {
  const text = bytes.toString('utf8');
  const at = controlCharacter(text);
  if (at !== undefined) {
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    const code = text.codePointAt(at)!.toString(16).toUpperCase().padStart(4, '0');
    return {
      ok: false,
      message: `${file}:${line}:${column}: control character U+${code}: not a text manifest (kubectl refuses it too)`,
    };
  }
  return { ok: true, text };
}

/**
 * The index of the first character kubectl's decoder refuses. YAML (1.2 §5.1, as kubectl's YAML
 * reader checks it) allows no C0 control but tab, line feed and carriage return, no DEL, no C1
 * control but NEL, no U+FFFE or U+FFFF; a byte order mark is allowed. A stream kubectl reads as
 * JSON (its first character is `{`) follows JSON's rule: no C0 control but tab, line feed and
 * carriage return.
 */
export function controlCharacter(text: string): number | undefined {
  const json = /^[\s\uFEFF]*\{/.test(text);
  const match = json
    ? /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/.exec(text)
    : /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u0084\u0086-\u009F\uFFFE\uFFFF]/.exec(text);
  return match ? match.index : undefined;
}

/** `permission denied`, `no such file or directory`: the system's words for what went wrong, without a stack. */
export function describeFsError(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const words: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    ELOOP: 'too many levels of symbolic links',
    ENOTDIR: 'not a directory',
    EISDIR: 'is a directory',
    ENAMETOOLONG: 'file name too long',
    EMFILE: 'too many open files',
    EIO: 'input/output error',
    ERR_INVALID_ARG_VALUE: 'not a valid file name',
    ERR_INVALID_ARG_TYPE: 'not a valid file name',
  };
  if (code && words[code]) return words[code];
  if (code) return code;
  return 'cannot be read';
}

/** How a file is shown: relative to the working directory when inside it, always with `/`. */
export function displayPath(file: string, cwd = process.cwd()): string {
  if (file === stdinTarget) return stdinDisplayName;
  const absolute = path.resolve(cwd, file);
  const relative = path.relative(cwd, absolute);
  const shown = relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : absolute;
  return shown.split(path.sep).join('/');
}
