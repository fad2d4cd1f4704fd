// JSON values written as YAML text that kubectl reads back as exactly that value.
//
// kubectl reads YAML 1.1 with go-yaml's rules (see yaml-scalars.ts): `yes`, `on`, `0755`, `1.0`,
// `~` and the empty text are not strings there. A string is written plain only when kubectl's
// reading, the YAML 1.1 reading and the YAML 1.2 reading of the `yaml` package all give back the
// same string, so the text means the same to kubectl and to the editor's YAML tooling; otherwise it
// is double-quoted.
import { parseDocument } from 'yaml';
import { isJsonObject, type JsonValue } from '../json';
import { resolveScalar } from './yaml-scalars';

/** How the surrounding file writes nested blocks, so new lines look like their neighbours. */
export interface BlockStyle {
  /** Spaces per nesting level of a map. */
  readonly indentUnit: number;
  /** `key:\n- item` (kubectl's own output) rather than `key:\n  - item`. */
  readonly indentlessSequences: boolean;
}

/** Whether the value needs lines of its own: a map or list with something in it. */
export function isBlockValue(value: JsonValue): boolean {
  return Array.isArray(value) ? value.length > 0 : isJsonObject(value) && Object.keys(value).length > 0;
}

/** The value on one line: scalars, `{}`/`[]`, or a flow collection. `inFlow` when inside `{...}`/`[...]`. */
export function renderInline(value: JsonValue, inFlow: boolean): string {
  if (Array.isArray(value)) return `[${value.map((v) => renderInline(v, true)).join(', ')}]`;
  if (isJsonObject(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${renderString(k, true)}: ${renderInline(v, true)}`)
      .join(', ')}}`;
  }
  return renderScalar(value, inFlow);
}

/** The value as JSON text, for documents written as JSON: still YAML that kubectl reads the same. */
export function renderJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(renderJson).join(', ')}]`;
  if (isJsonObject(value))
    return `{${Object.entries(value)
      .map(([k, v]) => `${doubleQuoted(k)}: ${renderJson(v)}`)
      .join(', ')}}`;
  return typeof value === 'string' ? doubleQuoted(value) : renderScalar(value, true);
}

/**
 * The value as block lines at `indent` spaces (no line breaks in the strings): a map's entries, a
 * list's `- ` items. Leaves are written inline.
 */
export function renderBlock(value: JsonValue, indent: number, style: BlockStyle): string[] {
  const pad = ' '.repeat(indent);
  const lines: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (!isBlockValue(item)) {
        lines.push(`${pad}- ${renderInline(item, false)}`);
        continue;
      }
      // The item's first line goes after its `- `, the rest line up under it.
      const inner = renderBlock(item, indent + 2, style);
      lines.push(`${pad}- ${inner[0]!.slice(indent + 2)}`, ...inner.slice(1));
    }
    return lines;
  }
  if (isJsonObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const key = renderString(k, false);
      if (!isBlockValue(v)) {
        lines.push(`${pad}${key}: ${renderInline(v, false)}`);
        continue;
      }
      const childIndent = Array.isArray(v) && style.indentlessSequences ? indent : indent + style.indentUnit;
      lines.push(`${pad}${key}:`, ...renderBlock(v, childIndent, style));
    }
    return lines;
  }
  return [`${pad}${renderScalar(value, false)}`];
}

export function renderScalar(value: null | boolean | number | string, inFlow: boolean): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return renderNumber(value);
  return renderString(value, inFlow);
}

function renderNumber(n: number): string {
  const text = String(n);
  const r = resolveScalar(text, true, undefined);
  // Every finite JavaScript number prints in a form go-yaml reads back as the same number; the
  // check keeps it that way should either side change.
  if (r.ok && r.value === n) return text;
  throw new Error(`cannot write the number ${text} as YAML`);
}

export function renderString(s: string, inFlow: boolean): string {
  return isPlainSafe(s, inFlow) ? s : doubleQuoted(s);
}

// Characters that start a YAML indicator when they open a plain scalar (YAML 1.2 §7.3.3 ns-plain-first).
const INDICATOR_START = /^[?:,[\]{}#&*!|>'"%@`]/;
const FLOW_INDICATOR = /[,[\]{}]/;

function isPlainSafe(s: string, inFlow: boolean): boolean {
  if (s === '' || s !== s.trim() || /[\0-\x1f\x7f-\x9f\u2028\u2029\ufeff]/.test(s)) return false;
  if (INDICATOR_START.test(s) || /^-(\s|$)/.test(s) || s.includes(': ') || s.includes(' #') || s.endsWith(':'))
    return false;
  if (inFlow && FLOW_INDICATOR.test(s)) return false;
  const kubectl = resolveScalar(s, true, undefined);
  if (!kubectl.ok || kubectl.value !== s) return false;
  for (const version of ['1.1', '1.2'] as const) {
    const doc = parseDocument(s, { version });
    if (doc.errors.length > 0 || doc.warnings.length > 0 || doc.toJS() !== s) return false;
  }
  return true;
}

/**
 * A YAML double-quoted scalar. JSON's escapes are all YAML escapes; on top, the characters YAML 1.1
 * treats as line breaks (U+0085, U+2028, U+2029) or refuses unescaped (C1 controls, DEL, BOM) are
 * escaped, or go-yaml would fold or reject them.
 */
export function doubleQuoted(s: string): string {
  return JSON.stringify(s).replace(
    /[\x7f-\x9f\u2028\u2029\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
