// The one reader of a small file the user's folder (or kubeconfig) names: a chart's files, an
// overlay's kustomizations, the Chart.yaml and kustomization files an editor's workspace is scanned
// for, the command line's manifests, a kubeconfig and the credentials it names. Whatever the file
// turns out to be, the read never blocks and never reads without end: a file that is not regular
// (a FIFO nobody writes to, a device, a socket, a folder) is refused on a stat before it is opened,
// and again on the open descriptor (something swapped in between); it is opened non-blocking, so
// a FIFO swapped in after the stat cannot hang the process; and it is read no further than the
// limit, however it grows. Problems are data; each caller words them as its users read them.
import * as fs from 'node:fs';

export interface SmallFileOptions {
  /** The most bytes read; a larger file is refused. */
  readonly maxBytes: number;
  /** A link is refused rather than followed (O_NOFOLLOW). Links are followed unless this is set. */
  readonly noLinks?: boolean;
}

export type SmallFileRead =
  /** `grew`: more bytes than the descriptor's size said (the file grew while it was read, within the limit). */
  | { readonly ok: true; readonly bytes: Buffer; readonly grew: boolean }
  | { readonly ok: false; readonly refused: 'not-regular'; readonly stat: fs.Stats }
  /** `size` as stat says it; `grew`: the file was under the limit on the stat and grew past it while it was read. */
  | { readonly ok: false; readonly refused: 'too-large'; readonly size: number; readonly grew: boolean }
  | { readonly ok: false; readonly refused: 'error'; readonly error: unknown };

/** The text (UTF-8) of a regular file of at most `maxBytes`, or undefined for anything else. */
export function readSmallText(file: string, options: SmallFileOptions): string | undefined {
  const read = readSmallFile(file, options);
  return read.ok ? read.bytes.toString('utf8') : undefined;
}

/** readSmallText, without blocking the event loop. */
export async function readSmallTextAsync(file: string, options: SmallFileOptions): Promise<string | undefined> {
  const read = await readSmallFileAsync(file, options);
  return read.ok ? read.bytes.toString('utf8') : undefined;
}

export function readSmallFile(file: string, options: SmallFileOptions): SmallFileRead {
  let fd: number;
  try {
    const refused = refusal(options.noLinks ? fs.lstatSync(file) : fs.statSync(file), options.maxBytes);
    if (refused) return refused;
    fd = fs.openSync(file, openFlags(options));
  } catch (error) {
    return { ok: false, refused: 'error', error };
  }
  try {
    const stat = fs.fstatSync(fd);
    const refused = refusal(stat, options.maxBytes);
    if (refused) return refused;
    const bounded = new BoundedRead(stat.size, options.maxBytes);
    for (;;) {
      const chunk = bounded.next();
      const done = bounded.took(chunk, fs.readSync(fd, chunk, 0, chunk.length, null));
      if (done) return done;
    }
  } catch (error) {
    return { ok: false, refused: 'error', error };
  } finally {
    fs.closeSync(fd);
  }
}

/** readSmallFile, without blocking the event loop. */
export async function readSmallFileAsync(file: string, options: SmallFileOptions): Promise<SmallFileRead> {
  let handle: fs.promises.FileHandle;
  try {
    const refused = refusal(
      options.noLinks ? await fs.promises.lstat(file) : await fs.promises.stat(file),
      options.maxBytes,
    );
    if (refused) return refused;
    handle = await fs.promises.open(file, openFlags(options));
  } catch (error) {
    return { ok: false, refused: 'error', error };
  }
  try {
    const stat = await handle.stat();
    const refused = refusal(stat, options.maxBytes);
    if (refused) return refused;
    const bounded = new BoundedRead(stat.size, options.maxBytes);
    for (;;) {
      const chunk = bounded.next();
      const done = bounded.took(chunk, (await handle.read(chunk, 0, chunk.length, null)).bytesRead);
      if (done) return done;
    }
  } catch (error) {
    return { ok: false, refused: 'error', error };
  } finally {
    await handle.close().catch(() => {});
  }
}

function openFlags(options: SmallFileOptions): number {
  return (
    fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (options.noLinks ? (fs.constants.O_NOFOLLOW ?? 0) : 0)
  );
}

function refusal(stat: fs.Stats, maxBytes: number): SmallFileRead | undefined {
  if (!stat.isFile()) return { ok: false, refused: 'not-regular', stat };
  if (stat.size > maxBytes) return { ok: false, refused: 'too-large', size: stat.size, grew: false };
  return undefined;
}

/** What a read has taken so far, never more than one byte past the limit. */
class BoundedRead {
  private readonly chunks: Buffer[] = [];
  private total = 0;

  constructor(
    private readonly size: number,
    private readonly maxBytes: number,
  ) {}

  /** Room for as much as the stat promised (one read for most files, one more finds the end), then more only while under the limit. */
  next(): Buffer {
    return Buffer.allocUnsafe(
      Math.min(Math.max(this.size + 1 - this.total, 64 * 1024), this.maxBytes + 1 - this.total),
    );
  }

  /** `n` bytes read into `chunk`: the answer at the end of the file or past the limit, else undefined (read on). */
  took(chunk: Buffer, n: number): SmallFileRead | undefined {
    if (n === 0) return { ok: true, bytes: Buffer.concat(this.chunks, this.total), grew: this.total > this.size };
    this.chunks.push(chunk.subarray(0, n));
    this.total += n;
    return this.total > this.maxBytes ? { ok: false, refused: 'too-large', size: this.size, grew: true } : undefined;
  }
}
