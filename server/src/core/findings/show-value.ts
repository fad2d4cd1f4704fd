// Values as a message or a hover shows them: JSON, cut to a length a line can hold.
import type { JsonValue } from '../json';

const shownLength = 60;

/** A value as a message shows it: JSON, cut to 60 characters. */
export function showValue(v: JsonValue): string {
  const s = JSON.stringify(v);
  return s.length > shownLength ? `${s.slice(0, shownLength - 3)}...` : s;
}

/**
 * Two values a message sets side by side (live, manifest), each cut to 60 characters as showValue
 * cuts one, but around the first place they differ: two long lists that share their first items
 * would otherwise both be cut inside the shared part and read the same. Each then starts at the
 * element (the list item, the map entry) where they part, after a `...`, at the same place in both.
 */
export function showValues(a: JsonValue, b: JsonValue): [string, string] {
  const s = JSON.stringify(a);
  const t = JSON.stringify(b);
  let differ = 0;
  while (differ < s.length && differ < t.length && s[differ] === t[differ]) differ++;
  // The plain cut shows where they part, with a few characters after it.
  if ((s.length <= shownLength && t.length <= shownLength) || s === t || differ + 10 <= shownLength - 3)
    return [showValue(a), showValue(b)];
  // The element the difference is in: after the last separator of the shared part (a map entry's
  // key included), unless that is far back (inside a long string): then a few characters before.
  const boundary =
    Math.max(s.lastIndexOf(',', differ - 1), s.lastIndexOf('[', differ - 1), s.lastIndexOf('{', differ - 1)) + 1;
  const start = differ - boundary <= 40 ? boundary : differ - 10;
  const cut = (v: string) =>
    v.length - start <= shownLength - 3 ? `...${v.slice(start)}` : `...${v.slice(start, start + shownLength - 6)}...`;
  return [cut(s), cut(t)];
}

/** `5, manifest 3`: the live value and the manifest's (or `unset`), shown where they differ. */
export function liveAndManifest(live: JsonValue, manifest: JsonValue | undefined): string {
  if (manifest === undefined) return `${showValue(live)}, manifest unset`;
  const [l, m] = showValues(live, manifest);
  return `${l}, manifest ${m}`;
}
