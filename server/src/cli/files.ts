// Which files a check reads: files named on the command line as they are, directories searched
// for *.yaml, *.yml and *.json (skipping hidden folders and node_modules), in a stable order.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const manifestExtensions = ['.yaml', '.yml', '.json'];

export type FileList = { ok: true; files: string[] } | { ok: false; message: string };

export function collectManifestFiles(targets: readonly string[]): FileList {
  const files: string[] = [];
  for (const target of targets) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(target);
    } catch {
      return { ok: false, message: `no such file or directory: ${target}` };
    }
    if (stat.isDirectory()) {
      const found = walk(target);
      if (found.length === 0) return { ok: false, message: `no manifests (${manifestExtensions.map((e) => `*${e}`).join(', ')}) under ${target}` };
      files.push(...found);
    } else {
      files.push(target);
    }
  }
  // A file named twice (directly and through its folder) is checked once.
  const seen = new Set<string>();
  return { ok: true, files: files.filter((f) => !seen.has(path.resolve(f)) && seen.add(path.resolve(f))) };
}

function walk(dir: string): string[] {
  const out: string[] = [];
  const entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      out.push(...walk(p));
    } else if (entry.isFile() && manifestExtensions.includes(path.extname(entry.name).toLowerCase())) {
      out.push(p);
    }
  }
  return out;
}

/** How a file is shown: relative to the working directory when inside it, always with `/`. */
export function displayPath(file: string, cwd = process.cwd()): string {
  const absolute = path.resolve(cwd, file);
  const relative = path.relative(cwd, absolute);
  const shown = relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : absolute;
  return shown.split(path.sep).join('/');
}
