// The GitOps corpus of the differential suite: test/differential/gitops/*.yaml. Each file is
// `{manifests: {NAME: text}, scenarios: [...]}`; a scenario is a history (the ordinary steps of
// scenario.ts plus `sync`, the real controller applying what Git holds), the controller and its
// options, and what Git holds at the sync that is judged. There is no expected answer in the data:
// the real controller's apply code, run on the real API server, gives it; `outcome` only guards
// against a history that silently stopped producing its situation.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { HistoryStep } from './scenario';

export type GitopsApplier = 'flux' | 'argocd-server-side' | 'argocd-client-side' | 'helm-upgrade';

export interface IgnoreRule {
  group?: string;
  kind: string;
  name?: string;
  jsonPointers?: string[];
  managedFieldsManagers?: string[];
}

/** What Git holds: a manifest of the file's `manifests`, changed by text replacements. */
export interface GitRef {
  git?: string;
  /** Replacements in the manifest's text, in order: `[from, to]`. */
  edit?: [string, string][];
}

export interface SyncStep extends GitRef {
  applier?: GitopsApplier;
  respectIgnoreDifferences?: boolean;
  ignore?: IgnoreRule[];
}

export type GitopsStep = HistoryStep | { sync: SyncStep };

export interface GitopsScenario extends GitRef {
  name: string;
  about?: string;
  applier: GitopsApplier;
  /** Flux: the Kustomization that applies (its owner labels). Default flux-system/apps. */
  kustomization?: { name: string; namespace: string };
  /** Flux: the Kustomization's spec.ignore paths (one rule for every object). */
  fluxIgnore?: string[];
  /** Argo CD: ignoreDifferences entries of the Application, and RespectIgnoreDifferences=true. */
  ignore?: IgnoreRule[];
  respectIgnoreDifferences?: boolean;
  history: GitopsStep[];
  /** Saves the history's object, the request and the server's object after it as a unit-test fixture of this name. */
  capture?: string;
  /** What the judged sync is meant to do. */
  outcome: 'applied' | 'created' | 'unchanged' | 'skipped';
  file: string;
  manifests: Record<string, string>;
}

export const gitopsDir = path.join(import.meta.dirname, 'gitops');

export function loadGitopsScenarios(dir = gitopsDir): GitopsScenario[] {
  const all: GitopsScenario[] = [];
  const names = new Set<string>();
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const doc = parseYaml(fs.readFileSync(path.join(dir, file), 'utf8')) as {
      manifests: Record<string, string>;
      scenarios: Omit<GitopsScenario, 'file' | 'manifests'>[];
    };
    for (const s of doc.scenarios) {
      if (names.has(s.name)) throw new Error(`${file}: scenario name used twice: ${s.name}`);
      names.add(s.name);
      all.push({ ...s, history: s.history ?? [], file, manifests: doc.manifests });
    }
  }
  return all;
}

/**
 * The text Git holds: for the judged sync, the scenario's manifest with its `edit`; for a `sync`
 * step of the history, the step's manifest (else the scenario's) with the step's own `edit` only.
 */
export function gitText(scenario: GitopsScenario, step?: GitRef): string {
  const name = step?.git ?? scenario.git;
  if (!name) throw new Error(`${scenario.name}: no git manifest`);
  let text = scenario.manifests[name];
  if (text === undefined) throw new Error(`${scenario.name}: no manifest named ${name}`);
  for (const [from, to] of (step ? step.edit : scenario.edit) ?? []) {
    if (!text.includes(from)) throw new Error(`${scenario.name}: the manifest ${name} has no ${JSON.stringify(from)}`);
    text = text.replace(from, to);
  }
  return text;
}
