// What each open YAML file is (core/sources/file-kinds.ts decides), with the context that decision
// needs: the kustomization files and Chart.yaml files of the workspace folders. A base is used by
// overlays elsewhere in the tree, so the folders are scanned — bounded (depth, entries, file size),
// without following links or entering hidden folders and node_modules, and only inside the
// workspace folders the editor named: a path from a document (or from a kustomization's text) never
// leads the server's reads outside them. Open documents count with their current text.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSmallTextAsync } from '../render/small-file';
import {
  classifyFiles,
  kustomizationFileNames,
  kustomizeRoots,
  overlayRoots,
  type FileKind,
  type KnownFile,
} from '../core/sources/file-kinds';

const CONTEXT_NAMES = new Set(['Chart.yaml', ...kustomizationFileNames]);
const MAX_DEPTH = 16;
const MAX_ENTRIES = 20_000;
const MAX_CONTEXT_FILES = 500;
const MAX_FILE_BYTES = 1024 * 1024;

/** A document's kind, with its absolute `/` path (undefined for documents that are not files). */
export interface ClassifiedFile {
  readonly path?: string;
  readonly kind: FileKind;
  /** The workspace folder it is in; rendering only ever happens inside one. */
  readonly folder?: string;
  /** For kustomizations and the files they use: the overlays to build (absolute folders). */
  readonly overlays: readonly string[];
}

export class SourceFiles {
  private folders: string[] = [];
  private readonly scans = new Map<string, { generation: number; files: Promise<KnownFile[]> }>();
  private generation = 0;

  /** The workspace folders, as the client named them (file URIs); anything else is dropped. */
  setFolders(uris: readonly string[]): void {
    this.folders = uris.map(filePath).filter((p): p is string => p !== undefined);
    this.invalidate();
  }

  /** A file was saved, opened or changed on disk: the context is read again when next asked for. */
  changed(uri: string): void {
    if (this.isContext(uri)) this.invalidate();
  }

  /** Whether the file is one that says what the others are (a Chart.yaml, a kustomization). */
  isContext(uri: string): boolean {
    const p = filePath(uri);
    return p !== undefined && CONTEXT_NAMES.has(path.posix.basename(p));
  }

  invalidate(): void {
    this.generation++;
  }

  /** The workspace folder holding `p`, if any. */
  folderOf(p: string): string | undefined {
    return this.folders
      .filter((f) => p === f || p.startsWith(f.endsWith('/') ? f : `${f}/`))
      .sort((a, b) => b.length - a.length)[0];
  }

  /** Whether `p` (absolute, `/`) lies inside a workspace folder. */
  inside(p: string): boolean {
    return this.folderOf(path.posix.normalize(p)) !== undefined;
  }

  /**
   * What the document is. `open`: the other open documents (uri → text), whose text wins over the
   * disk's. A document outside every workspace folder is judged from its own text and name alone.
   */
  async classify(uri: string, text: string, open: ReadonlyMap<string, string>): Promise<ClassifiedFile> {
    const p = filePath(uri);
    if (!p) return { kind: { kind: 'manifest' }, overlays: [] };
    const folder = this.folderOf(p);
    const known = new Map<string, KnownFile>();
    if (folder) for (const f of await this.scan(folder)) known.set(f.path, f);
    for (const [u, t] of open) {
      // An open context file counts with its text, also before the scan has seen it on disk.
      const q = filePath(u);
      if (
        q &&
        (known.has(q) ||
          (folder !== undefined && this.folderOf(q) === folder && CONTEXT_NAMES.has(path.posix.basename(q))))
      )
        known.set(q, { path: q, text: t });
    }
    known.set(p, { path: p, text });
    const files = [...known.values()];
    const kind = classifyFiles(files).get(p) ?? { kind: 'manifest' };
    const overlays =
      kind.kind === 'kustomization' || kind.kind === 'kustomization-input'
        ? kustomizeRoots(files, p).filter((r) => this.inside(r))
        : [];
    return { path: p, kind, ...(folder ? { folder } : {}), overlays };
  }

  /** Every overlay of a workspace folder (a kustomization nothing else uses and not a component), from the bounded scan. */
  async overlaysIn(folder: string): Promise<string[]> {
    return overlayRoots(await this.scan(folder)).filter((r) => this.folderOf(r) === folder);
  }

  /** Every chart of a workspace folder (the folders of its Chart.yaml files, subcharts too), from the bounded scan. */
  async chartsIn(folder: string): Promise<string[]> {
    return (await this.scan(folder))
      .filter((f) => path.posix.basename(f.path) === 'Chart.yaml')
      .map((f) => path.posix.dirname(f.path))
      .filter((c) => this.folderOf(c) === folder);
  }

  private scan(folder: string): Promise<KnownFile[]> {
    const known = this.scans.get(folder);
    if (known && known.generation === this.generation) return known.files;
    const files = scanFolder(folder);
    this.scans.set(folder, { generation: this.generation, files });
    return files;
  }
}

/** The context files under `folder`: breadth first, bounded, no links followed. */
async function scanFolder(folder: string): Promise<KnownFile[]> {
  const out: KnownFile[] = [];
  let queue: string[] = [folder];
  let entries = 0;
  for (let depth = 0; depth <= MAX_DEPTH && queue.length > 0; depth++) {
    const next: string[] = [];
    for (const dir of queue) {
      let list: fs.Dirent[];
      try {
        list = await fs.promises.readdir(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of list) {
        if (++entries > MAX_ENTRIES) return out;
        const p = dir === '/' ? `/${e.name}` : `${dir}/${e.name}`;
        if (e.isDirectory()) {
          if (!e.name.startsWith('.') && e.name !== 'node_modules') next.push(p);
        } else if (e.isFile() && CONTEXT_NAMES.has(e.name)) {
          const text = await readSmallTextAsync(p, { maxBytes: MAX_FILE_BYTES, noLinks: true });
          if (text !== undefined) out.push({ path: p, text });
          if (out.length >= MAX_CONTEXT_FILES) return out;
        }
      }
    }
    queue = next;
  }
  return out;
}

/** The absolute `/` path of a `file:` URI; undefined for any other scheme or a malformed URI. */
export function filePath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    const p = fileURLToPath(uri);
    return path.isAbsolute(p) ? p.split(path.sep).join('/') : undefined;
  } catch {
    return undefined;
  }
}
