// The scenario corpus of the differential suite: test/differential/scenarios/*.yaml, each file a
// list of scenarios. A scenario is the history of writes that produced a live object, the manifest
// the user holds, and how the user will send it. There is no expected answer in the data: the real
// kube-apiserver gives it. `server` only names the kind of answer the history is meant to provoke,
// so that a history that silently stopped producing its situation fails instead of agreeing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ApplyMode } from '../../server/src/core/ssa/predict';
import type { KubeObject, PatchType } from '../support/seed';

/** The target of a step when it is not the manifest's object. */
export interface StepTarget {
  apiVersion: string;
  kind: string;
  name: string;
}

/**
 * One write of a history, sent as admin. `repeat: n` sends it n times with `${i}` (1-based, two
 * digits) replaced in every string of the step: a dozen distinct writers in one line.
 */
export type HistoryStep = { repeat?: number } & (
  | { apply: { manager: string; force?: boolean; subresource?: string; object: KubeObject } }
  | { create: { manager: string; object: KubeObject } }
  /** PUT of the current object with `merge` deep-merged into it (maps merge, lists are replaced). */
  | { update: { manager: string; merge: Record<string, unknown>; subresource?: string; target?: StepTarget } }
  | { patch: { manager: string; type?: PatchType; body: unknown; subresource?: string; target?: StepTarget } }
  /** What an autoscaler or `kubectl scale` does: GET and PUT of the scale subresource. */
  | { scale: { manager: string; replicas: number; target?: StepTarget } }
  /** Plain `kubectl apply` (manager kubectl-client-side-apply, with the last-applied annotation). */
  | { clientSideApply: { object: KubeObject } }
  /** managedFields: [{}] — the object as if it predated field tracking. */
  | { resetManagedFields: { target?: StepTarget } }
  | { delete: { target?: StepTarget } }
  /**
   * Installs or changes a CustomResourceDefinition (server-side apply as kch-test-setup, forced) and
   * waits until the server writes with its new schema: how a CRD upgrade changes the schema under
   * managedFields recorded before it. A CRD named by `crd` steps belongs to one scenario only (the
   * scenarios run side by side); the suite installs its first state before the product connects.
   */
  | { crd: { object: KubeObject } }
);

export type ServerAnswer =
  'accepted' | 'fieldConflict' | 'alreadyExists' | 'staleResourceVersion' | 'uidMismatch' | 'notFound' | 'rejected';

export interface Scenario {
  /** Unique across the corpus. */
  name: string;
  /** What the scenario is about, in a sentence (optional). */
  about?: string;
  history: HistoryStep[];
  /**
   * The manifest as the user's file has it (YAML or JSON text), without metadata.namespace: the
   * suite puts each scenario in a namespace of its own and adds it under `metadata:`. A manifest
   * that writes `${namespace}` places its objects itself (the scenario's namespace is put there);
   * only such a manifest may hold several objects: the last one is the object judged, the ones
   * before it are the files applied with it (a CustomResourceDefinition, a Namespace).
   */
  manifest: string;
  /** `absent`: the scenario's namespace is never created (the object goes to a namespace that does not exist). */
  namespace?: 'absent';
  fieldManager?: string;
  mode?: ApplyMode;
  /** The kind of answer the history is built to get from the server. */
  server: ServerAnswer;
  /**
   * `refuses`: kubectl refuses the manifest before it sends anything (its check of the decoded
   * object's metadata). Its words are then the user's answer, and the prediction must name the
   * field they name; the server is asked what the product's own dry run sends.
   */
  kubectl?: 'refuses';
  /** A reason to leave the scenario out of the agreement figure. Never without one. */
  excluded?: string;
  /** The file it came from, for messages. */
  file: string;
}

export const scenarioDir = path.join(import.meta.dirname, 'scenarios');
export const crdDir = path.join(import.meta.dirname, 'crds');

const stepKinds = [
  'apply',
  'create',
  'update',
  'patch',
  'scale',
  'clientSideApply',
  'resetManagedFields',
  'delete',
  'crd',
];
const answers: ServerAnswer[] = [
  'accepted',
  'fieldConflict',
  'alreadyExists',
  'staleResourceVersion',
  'uidMismatch',
  'notFound',
  'rejected',
];
const modes: ApplyMode[] = ['serverSide', 'clientSide', 'create'];

/** Every scenario of the corpus; a malformed one throws with its file and name. */
export function loadScenarios(dir = scenarioDir): Scenario[] {
  const out: Scenario[] = [];
  const names = new Set<string>();
  const crdOwners = new Map<string, string>();
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const list = parseYaml(fs.readFileSync(path.join(dir, file), 'utf8')) as unknown;
    if (!Array.isArray(list)) throw new Error(`${file}: a scenario file is a YAML list`);
    for (const raw of list as Record<string, unknown>[]) {
      const where = `${file}: ${String(raw.name)}`;
      if (typeof raw.name !== 'string' || raw.name === '') throw new Error(`${file}: a scenario without a name`);
      if (names.has(raw.name)) throw new Error(`${where}: the name is used twice`);
      names.add(raw.name);
      if (typeof raw.manifest !== 'string')
        throw new Error(`${where}: manifest must be the file's text (a block scalar)`);
      if (!answers.includes(raw.server as ServerAnswer))
        throw new Error(`${where}: server must be one of ${answers.join(', ')}`);
      if (raw.mode !== undefined && !modes.includes(raw.mode as ApplyMode))
        throw new Error(`${where}: unknown mode ${String(raw.mode)}`);
      if (raw.kubectl !== undefined && raw.kubectl !== 'refuses')
        throw new Error(`${where}: kubectl can only be "refuses"`);
      if (raw.excluded !== undefined && (typeof raw.excluded !== 'string' || raw.excluded.trim() === '')) {
        throw new Error(`${where}: excluded needs a written reason`);
      }
      const history = (raw.history ?? []) as HistoryStep[];
      if (!Array.isArray(history)) throw new Error(`${where}: history must be a list`);
      if (raw.namespace !== undefined && raw.namespace !== 'absent')
        throw new Error(`${where}: namespace can only be "absent"`);
      if (raw.namespace === 'absent' && history.length > 0)
        throw new Error(`${where}: a scenario whose namespace is absent has no history to write there`);
      for (const step of history) {
        const kinds = Object.keys(step).filter((k) => k !== 'repeat');
        if (kinds.length !== 1 || !stepKinds.includes(kinds[0] as string)) {
          throw new Error(
            `${where}: a history step is exactly one of ${stepKinds.join(', ')} (got ${kinds.join(', ')})`,
          );
        }
      }
      for (const name of new Set(crdSteps(history).map((c) => String(c.metadata?.name)))) {
        const owner = crdOwners.get(name);
        if (owner !== undefined)
          throw new Error(
            `${where}: the CRD ${name} is changed by "${owner}" too; each scenario changes a CRD of its own`,
          );
        crdOwners.set(name, raw.name);
      }
      out.push({ ...(raw as unknown as Scenario), history, file });
    }
  }
  return out;
}

/** The CustomResourceDefinitions a history installs or changes, in order. */
export function crdSteps(history: readonly HistoryStep[]): KubeObject[] {
  return history.flatMap((step) => ('crd' in step ? [step.crd.object] : []));
}

/**
 * The manifest text with `namespace: <ns>` added under its top-level `metadata:` line. Text, not a
 * re-serialized object: the scalars, duplicates and formatting the scenario is about stay as written.
 * A manifest that writes `${namespace}` itself gets it replaced instead, and no namespace added.
 */
export function withNamespace(text: string, namespace: string): string {
  // A cluster-scoped object has no namespace: its manifest names the scenario's namespace where it
  // wants it (`name: kch-${namespace}`), so that every run has objects of its own.
  if (text.includes('${namespace}')) return text.replaceAll('${namespace}', namespace);
  const json = /^\s*\{/.test(text);
  if (json) {
    const replaced = text.replace(/"metadata"\s*:\s*\{/, (m) => `${m}"namespace": ${JSON.stringify(namespace)}, `);
    if (replaced === text) throw new Error('a JSON manifest without a "metadata" object');
    return replaced;
  }
  // Indented like the key that follows `metadata:`, so any indentation width works.
  const replaced = text.replace(
    /^metadata:[ \t]*(#.*)?\r?\n([ \t]+)/m,
    (m, _comment, indent: string) => `${m}namespace: ${namespace}\n${indent}`,
  );
  if (replaced === text) throw new Error('the manifest needs a block-style `metadata:` line followed by its keys');
  return replaced;
}

/** The history with `${namespace}` replaced, as in the manifest (withNamespace). */
export function historyIn(history: readonly HistoryStep[], namespace: string): HistoryStep[] {
  return JSON.parse(JSON.stringify(history).replaceAll('${namespace}', namespace)) as HistoryStep[];
}
