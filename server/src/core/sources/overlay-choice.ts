// Which overlays count: the user's list (`kustomizeOverlays`, folders relative to the workspace
// folder, `*`, `**` and `?` allowed) chooses among the overlays found in the folder. The entries are
// settings text, so each is checked before it means anything: an entry that is absolute outside the
// folder, or that climbs out of it with `..`, is refused with its reason, and never becomes a path
// that anything reads. Entries are only ever compared with overlays already found inside the
// folder, so even a valid entry leads no read anywhere.
//
// Pure: `/`-separated absolute paths in, decisions out.
import { normalizePath } from './file-kinds';

export interface InvalidOverlayEntry {
  readonly entry: string;
  readonly reason: string;
}

export interface OverlayPattern {
  /** As the user wrote it. */
  readonly entry: string;
  /** Whether the overlay at `relative` (to the workspace folder, `.` for the folder itself) is meant. */
  readonly matches: (relative: string) => boolean;
}

export interface OverlayEntries {
  readonly patterns: readonly OverlayPattern[];
  readonly invalid: readonly InvalidOverlayEntry[];
}

const MAX_ENTRY_LENGTH = 1024;

/** The user's entries, each checked: patterns for the valid ones, a reason for each other. */
export function parseOverlayEntries(folder: string, entries: readonly string[]): OverlayEntries {
  const patterns: OverlayPattern[] = [];
  const invalid: InvalidOverlayEntry[] = [];
  for (const entry of entries) {
    const checked = checkEntry(folder, entry);
    if ('reason' in checked) invalid.push({ entry, reason: checked.reason });
    else patterns.push({ entry, matches: globMatcher(checked.relative) });
  }
  return { patterns, invalid };
}

function checkEntry(folder: string, entry: string): { relative: string } | { reason: string } {
  const raw = entry.trim();
  if (raw === '') return { reason: 'is empty' };
  if (raw.length > MAX_ENTRY_LENGTH) return { reason: `is longer than ${MAX_ENTRY_LENGTH} characters` };

  if (/[\u0000-\u001f\u007f]/.test(raw)) return { reason: 'holds a control character' };
  const slashed = raw.replace(/\\/g, '/');
  const base = normalizePath(folder);
  let relative: string;
  if (slashed.startsWith('/') || /^[A-Za-z]:\//.test(slashed) || slashed.startsWith('~')) {
    const absolute = normalizePath(slashed);
    if (absolute !== base && !absolute.startsWith(base === '/' ? '/' : `${base}/`))
      return { reason: 'is outside the workspace folder' };
    relative = absolute === base ? '.' : absolute.slice(base === '/' ? 1 : base.length + 1);
  } else {
    // `..` may only lead back into the folder (`a/../b`), never out of it.
    let depth = 0;
    for (const part of slashed.split('/')) {
      if (part === '..') depth--;
      else if (part !== '' && part !== '.') depth++;
      if (depth < 0) return { reason: 'leads outside the workspace folder through ..' };
    }
    relative = normalizePath(slashed) || '.';
  }
  return { relative };
}

/** `*` one path segment's characters, `**` any number of segments, `?` one character; the rest literal. */
function globMatcher(pattern: string): (relative: string) => boolean {
  if (!/[*?]/.test(pattern)) return (relative) => relative === pattern;
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      // `**/` also matches no folder at all.
      if (pattern[i + 2] === '/') {
        source += '(?:.*/)?';
        i += 2;
      } else {
        source += '.*';
        i += 1;
      }
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const re = new RegExp(`^${source}$`);
  return (relative) => re.test(relative);
}

/** An overlay's folder as the setting names it: relative to the workspace folder, `.` for the folder itself. */
export function overlayEntryOf(folder: string, root: string): string {
  const base = normalizePath(folder);
  const r = normalizePath(root);
  if (r === base) return '.';
  return r.startsWith(`${base}/`) ? r.slice(base.length + 1) : r;
}

/**
 * The overlays among `roots` (inside `folder`) that count: those a valid entry names, or every one
 * when no entry is valid (the default, an empty list: every overlay that uses the file).
 */
export function countedOverlays(folder: string, roots: readonly string[], entries: OverlayEntries): string[] {
  if (entries.patterns.length === 0) return [...roots];
  return roots.filter((root) => entries.patterns.some((p) => p.matches(overlayEntryOf(folder, root))));
}

/**
 * The valid entries that name none of the folder's overlays (`allRoots`): a typo counts no overlay
 * at all, which the user should hear about.
 */
export function unmatchedEntries(folder: string, allRoots: readonly string[], entries: OverlayEntries): string[] {
  return entries.patterns
    .filter((p) => !allRoots.some((root) => p.matches(overlayEntryOf(folder, root))))
    .map((p) => p.entry);
}

/**
 * What the folder's setting must keep, besides the overlays picked among `offered` (the overlays
 * of one file), so that choosing for one file changes nothing for the others: with no valid entry
 * (every overlay counts), every other overlay of the folder; otherwise each entry that names none of
 * `offered` as it is, and for an entry (a glob) that names some of them, the other overlays it
 * names. Invalid entries are kept as written: the user hears about them, and it is theirs to fix.
 */
export function entriesToKeep(
  folder: string,
  allRoots: readonly string[],
  offered: readonly string[],
  current: readonly string[],
): string[] {
  const parsed = parseOverlayEntries(folder, current);
  const offeredEntries = new Set(offered.map((r) => overlayEntryOf(folder, r)));
  const others = allRoots.map((r) => overlayEntryOf(folder, r)).filter((e) => !offeredEntries.has(e));
  const keep: string[] = [];
  const add = (e: string) => {
    if (!keep.includes(e)) keep.push(e);
  };
  if (parsed.patterns.length === 0) {
    parsed.invalid.forEach((i) => add(i.entry));
    others.forEach(add);
    return keep;
  }
  for (const entry of current) {
    const pattern = parsed.patterns.find((p) => p.entry === entry);
    if (!pattern) add(entry);
    else if (![...offeredEntries].some((e) => pattern.matches(e))) add(entry);
    else others.filter((e) => pattern.matches(e)).forEach(add);
  }
  return keep;
}
