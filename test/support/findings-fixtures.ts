// Histories captured from the real kube-apiserver (test/fixtures/findings/, see its README.md) and
// the helpers the findings tests share: the manifest the user holds, the live object as the server
// returned it, and the facts the cluster layer would hand the analysis for them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import type { CheckedObject, CheckReport } from '../../server/src/cli/report';
import { analyzeResource, objectIdentity, problemFindings, type ResourceFacts } from '../../server/src/core/findings';
import type { JsonObject, JsonValue } from '../../server/src/core/json';
import { parseManifestText, type ManifestResource, type Position } from '../../server/src/core/manifest/manifest';
import { schemaFromOpenApi } from '../../server/src/core/ssa/schema';

const fixtures = path.join(import.meta.dirname, '..', 'fixtures');
export const findingsFixtures = path.join(fixtures, 'findings');

/** The OpenAPI v3 documents the server serves (test/fixtures/openapi/), as the engine's schema. */
export const schema = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'openapi', f), 'utf8')) as JsonValue,
  ),
).schema;

export interface CapturedHistory {
  readonly name: string;
  /** What was done to the object, in words. */
  readonly history: string;
  readonly server: string;
  readonly resource: { readonly group: string; readonly resource: string };
  /** The manifest the user holds, as YAML text. */
  readonly manifest: string;
  /** The object as the server returned it after the history. */
  readonly live: JsonObject;
}

export function capturedHistory(name: string): CapturedHistory {
  const file = path.join(findingsFixtures, `${name}.yaml`);
  return { name, ...(parse(fs.readFileSync(file, 'utf8')) as Omit<CapturedHistory, 'name'>) };
}

export function historyNames(): string[] {
  return fs
    .readdirSync(findingsFixtures)
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.cases.yaml'))
    .map((f) => f.replace(/\.yaml$/, ''))
    .sort();
}

/** The one resource of the history's manifest. */
export function manifestResource(h: CapturedHistory): ManifestResource {
  const parsed = parseManifestText(h.manifest);
  if (parsed.resources.length !== 1 || parsed.problems.length > 0)
    throw new Error(`${h.name}: the manifest is not one clean resource`);
  return parsed.resources[0]!;
}

/** What the cluster layer hands the analysis: the kind served, the live object (or its absence), the schema. */
export function factsOf(h: CapturedHistory, live: 'exists' | 'absent' = 'exists'): ResourceFacts {
  return {
    kind: { state: 'served', group: h.resource.group, resource: h.resource.resource, namespaced: true },
    live: live === 'exists' ? { state: 'exists', object: h.live } : { state: 'absent' },
    schema,
  };
}

/** A place in the manifest as a case names it: the first line matching `line`, at the first `on` in it (or its first non-blank). */
export interface Place {
  readonly line: string;
  readonly on?: string;
}

export function positionOf(text: string, place: Place): Position {
  const lines = text.split('\n');
  const line = lines.findIndex((l) => new RegExp(place.line).test(l));
  if (line < 0) throw new Error(`no line matches ${place.line}`);
  const character = place.on !== undefined ? lines[line]!.indexOf(place.on) : lines[line]!.search(/\S/);
  if (character < 0) throw new Error(`${JSON.stringify(place.on)} is not on line ${line + 1}: ${lines[line]}`);
  return { line, character };
}

/** Loads a hand-written cases file of test/fixtures/findings/. */
export function cases<T>(file: string): T[] {
  return parse(fs.readFileSync(path.join(findingsFixtures, file), 'utf8')) as T[];
}

/**
 * A check of every captured history, as `check` gathers it: each history's manifest as a file
 * named after it, its object's findings (the same analysis the command line runs), plus a file with
 * text problems, an object with a note and one whose --verify dry run the server answered otherwise.
 */
export function checkOfHistories(applyMode: 'serverSide' | 'clientSide' | 'create' = 'serverSide'): CheckReport {
  const objects: CheckedObject[] = [];
  for (const name of historyNames()) {
    const h = capturedHistory(name);
    const resource = manifestResource(h);
    const findings = analyzeResource(resource, factsOf(h), { fieldManager: 'kubectl', applyMode });
    const title = `${h.resource.resource}${h.resource.group ? `.${h.resource.group}` : ''}/${resource.name} (namespace ${resource.namespace})`;
    objects.push({ file: `k8s/${name}.yaml`, object: objectIdentity(resource), title, findings, notes: [] });
  }
  const broken = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n';
  objects.push({
    file: 'k8s/broken.yaml',
    title: 'k8s/broken.yaml',
    findings: problemFindings(parseManifestText(broken).problems),
    notes: [],
  });
  const [first] = objects;
  objects.push({
    ...first!,
    findings: [],
    notes: ['not in the snapshot'],
    verification: {
      agrees: false,
      serverAnswer: 'ConfigMap "odd" is invalid',
      differences: [
        {
          message: 'the server refuses the manifest',
          range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } },
          path: '.data',
        },
      ],
    },
  });
  return {
    mode: applyMode,
    fieldManager: 'kubectl',
    source: { kind: 'snapshot', directory: 'snap', context: 'admin', server: 'https://127.0.0.1:6443' },
    files: [...new Set(objects.map((o) => o.file))],
    objects,
  };
}
