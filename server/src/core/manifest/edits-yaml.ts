// Edits in YAML that is not a Kubernetes object — a chart's values file, whose `replicaCount: 3` sets
// a rendered Deployment's replicas — through the same edit planner and the same check as manifests
// (edits.ts): the text is read as the body of an object whose head two lines provide, and every
// edit must stay below that head. What the planner refuses here it refuses for a manifest too.
import { replaceValueEdits, type EditResult } from './edits';
import { forEachNode, nodeToJson, parseManifestText, type ManifestResource } from './manifest';
import type { JsonValue } from '../json';
import type { FieldPath } from '../ssa/path';

const HEAD = 'apiVersion: v1\nkind: PlainYaml\n';
const HEAD_LINES = 2;

/** The field written by the key (or list item) on `line` of `text`, the deepest one there. */
export function plainYamlPathAt(text: string, line: number): FieldPath | undefined {
  const resource = asResource(text);
  if (!resource) return undefined;
  let found: FieldPath | undefined;
  forEachNode(resource, (v) => {
    if (v.keyRange.start.line === line + HEAD_LINES) found = v.path;
  });
  return found;
}

/** Sets the field whose key is on `line` to `value`; refused where the planner would refuse it. */
export function replacePlainYamlValueEdits(text: string, line: number, value: JsonValue): EditResult {
  const resource = asResource(text);
  const path = plainYamlPathAt(text, line);
  if (!resource || !path) return { edits: undefined, reason: 'this line sets no value that can be replaced' };
  const result = replaceValueEdits(HEAD + text, resource, path, value);
  if (!result.edits) return result;
  if (result.edits.some((e) => e.range.start.line < HEAD_LINES))
    return { edits: undefined, reason: 'the edit would change the top of the file' };
  const up = (p: { line: number; character: number }) => ({ line: p.line - HEAD_LINES, character: p.character });
  return { edits: result.edits.map((e) => ({ ...e, range: { start: up(e.range.start), end: up(e.range.end) } })) };
}

function asResource(text: string): ManifestResource | undefined {
  // One mapping document, in block or flow style alike; several documents or a text that is a JSON
  // stream are not edited (the head would not belong to them all).
  if (/^---/m.test(text) || /^\s*[{[]/.test(text) || /^["']?(apiVersion|kind)["']?\s*:/m.test(text)) return undefined;
  const parsed = parseManifestText(HEAD + text);
  return parsed.problems.length === 0 && parsed.resources.length === 1 && parsed.resources[0]!.itemIndex === undefined
    ? parsed.resources[0]
    : undefined;
}

/** The value written by the key (or list item) on `line` of `text`; undefined when the line writes none. */
export function plainYamlValueAt(text: string, line: number): JsonValue | undefined {
  const resource = asResource(text);
  if (!resource) return undefined;
  let found: JsonValue | undefined;
  forEachNode(resource, (v) => {
    if (v.keyRange.start.line === line + HEAD_LINES) found = nodeToJson(v.node);
  });
  return found;
}
