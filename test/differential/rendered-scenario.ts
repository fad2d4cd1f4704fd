// The rendered corpus of the differential suite: test/differential/rendered/*.yaml. A rendered
// scenario is a tree of source files (overlays, bases, components, patches; charts), a history of
// writes that produced the live objects (often: the rendered output applied, then an autoscaler, a
// `kubectl edit`, another tool), the target the user checks, and — written by hand from the source
// files, never computed by product code — the source file and line each conflict must be reported on.
// Which conflicts there are is the server's to say (a dry run of the rendered output); `expect` must
// name exactly those, so a history that stopped provoking its situation fails instead of agreeing.
//
// One file per renderer family (kustomize-*.yaml, helm-*.yaml), so scenarios of different renderers
// never touch the same file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { HistoryStep, ServerAnswer } from './scenario';

export const renderedDir = path.join(import.meta.dirname, 'rendered');

/** A history step of a rendered scenario: the ordinary steps, plus the rendered output applied. */
export type RenderedStep =
  | HistoryStep
  /** Render `target` with the test's own tool and server-side apply every object it prints. */
  | { applyRendered: { target: string; manager: string; force?: boolean } }
  /** Render `target` and send every object as plain `kubectl apply` does (client-side). */
  | { clientSideApplyRendered: { target: string } };

/** One conflict the server names, and where the user must read it. */
export interface ExpectedConflict {
  /** `Kind/name` of the rendered object, as rendered (prefixes and generator hashes: `name-*`). */
  object: string;
  /** The field in the server's notation. */
  path: string;
  /** The field manager the server names. */
  manager: string;
  /** `file:line` (1-based, relative to the scenario's tree): where the finding must land. */
  at: string;
}

export interface RenderedScenario {
  name: string;
  about?: string;
  /** `kustomize` (the only one so far; `helm` scenarios name theirs). */
  renderer: string;
  /** Relative path → text; `${namespace}` is the scenario's own namespace. */
  files: Record<string, string>;
  history: RenderedStep[];
  /** What the user checks: the kustomization folder (or chart) rendered. */
  check: { target: string; fieldManager?: string };
  /** The kind of answer the history is built to get (accepted: no object conflicts). */
  server: Extract<ServerAnswer, 'accepted' | 'fieldConflict'>;
  expect: ExpectedConflict[];
  excluded?: string;
  file: string;
}

const extraSteps = ['applyRendered', 'clientSideApplyRendered'];
const ordinarySteps = ['apply', 'create', 'update', 'patch', 'scale', 'clientSideApply', 'resetManagedFields', 'delete'];

/**
 * Every rendered scenario. A file is `{filesets: {name: {path: text}}, scenarios: [...]}`; a scenario's
 * `use: [name, ...]` starts its tree from those file sets (its own `files` override them), so a base
 * shared by many scenarios is written once and its line numbers are read in one place.
 */
export function loadRenderedScenarios(dir = renderedDir): RenderedScenario[] {
  const out: RenderedScenario[] = [];
  const names = new Set<string>();
  if (!fs.existsSync(dir)) return out;
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    const doc = parseYaml(fs.readFileSync(path.join(dir, file), 'utf8')) as { filesets?: Record<string, Record<string, string>>; scenarios?: Record<string, unknown>[] };
    const filesets = doc.filesets ?? {};
    if (!Array.isArray(doc.scenarios)) throw new Error(`${file}: needs a list under scenarios:`);
    for (const raw of doc.scenarios) {
      const where = `${file}: ${String(raw.name)}`;
      if (typeof raw.name !== 'string' || raw.name === '') throw new Error(`${file}: a scenario without a name`);
      if (names.has(raw.name)) throw new Error(`${where}: the name is used twice`);
      names.add(raw.name);
      if (typeof raw.renderer !== 'string') throw new Error(`${where}: renderer is missing`);
      if (raw.server !== 'accepted' && raw.server !== 'fieldConflict') throw new Error(`${where}: server must be accepted or fieldConflict`);
      const files: Record<string, string> = {};
      for (const set of (raw.use ?? []) as string[]) {
        if (!filesets[set]) throw new Error(`${where}: no fileset ${set}`);
        Object.assign(files, filesets[set]);
      }
      Object.assign(files, (raw.files ?? {}) as Record<string, string>);
      const history = (raw.history ?? []) as RenderedStep[];
      for (const step of history) {
        const kinds = Object.keys(step).filter((k) => k !== 'repeat');
        if (kinds.length !== 1 || ![...ordinarySteps, ...extraSteps].includes(kinds[0]!)) throw new Error(`${where}: unknown history step ${kinds.join(', ')}`);
      }
      const check = raw.check as RenderedScenario['check'] | undefined;
      if (!check || typeof check.target !== 'string') throw new Error(`${where}: check.target is missing`);
      const expect = (raw.expect ?? []) as ExpectedConflict[];
      for (const e of expect) {
        if (!/^[^:]+:\d+$/.test(e.at ?? '')) throw new Error(`${where}: expect.at must be file:line (${JSON.stringify(e)})`);
        if (!(e.at.split(':')[0]! in files)) throw new Error(`${where}: expect.at names a file the scenario does not have: ${e.at}`);
      }
      if ((raw.server === 'accepted') !== (expect.length === 0)) throw new Error(`${where}: an accepted scenario expects no conflict, a conflict scenario names them`);
      if (raw.excluded !== undefined && (typeof raw.excluded !== 'string' || raw.excluded.trim() === '')) throw new Error(`${where}: excluded needs a written reason`);
      out.push({ ...(raw as unknown as RenderedScenario), files, history, check, expect, file });
    }
  }
  return out;
}

/** `${namespace}` replaced in every string of a value. */
export function inNamespace<T>(value: T, namespace: string): T {
  return JSON.parse(JSON.stringify(value).replaceAll('${namespace}', namespace)) as T;
}
