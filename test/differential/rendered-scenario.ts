// The rendered corpus of the differential suite: test/differential/rendered/*.yaml, one file per
// renderer family (kustomize.yaml, helm.yaml), so scenarios of different renderers never touch the
// same file. A file is `{filesets?: {...}, scenarios: [...]}`; every scenario names its `renderer`,
// the family whose module (render-kustomize.ts, render-helm.ts) reads the rest of it, replays its
// history, asks the server and runs the product.
//
// What every family shares: the truth is the server's dry run of the rendered output, sent as the
// user's tool sends it; a scenario's expectations (which conflicts, on which source lines) are
// written by hand from the source files, never computed by product code; `server` says what the
// history is built to provoke, so a history that stopped provoking it fails instead of agreeing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { parse as parseYaml } from 'yaml';
import type { Settings } from '../../server/src/protocol';
import type { ServerAnswer } from './scenario';

export const renderedDir = path.join(import.meta.dirname, 'rendered');

/** What the loader reads of every scenario, whatever renders it. */
export interface ScenarioBase {
  name: string;
  about?: string;
  /** The family that renders it: a key of the `renderers` table (renderers.ts). */
  renderer: string;
  /** The kind of answer the history is built to get (accepted: no object conflicts). */
  server: Extract<ServerAnswer, 'accepted' | 'fieldConflict' | 'alreadyExists' | 'rejected'>;
  excluded?: string;
  /** The corpus file it comes from. */
  file: string;
}

/** A corpus file as written. */
export interface RenderedFile {
  filesets?: Record<string, Record<string, string>>;
  scenarios?: Record<string, unknown>[];
}

/** Where a scenario runs: its own namespace prefix on the real API server. */
export interface ScenarioContext {
  kubeconfig: string;
  /** Unique per scenario: the prefix of its namespace and scratch folder. */
  prefix: string;
}

/** A scenario's sources on disk, after its history, as the editor and the command line are given them. */
export interface CheckedSources {
  /** The editor's workspace folder, and where `check` runs. */
  folder: string;
  /** Every source file of the target (absolute): each opened in the editor, each compared. */
  files: string[];
  /** `check`'s arguments besides the cluster's and the format: the target and how it is sent. */
  cliArgs: string[];
  /** The editor's settings besides the cluster's: the same target, sent the same way. */
  settings: Partial<Settings>;
}

/**
 * A renderer family: its scenario file, and the module that reads a scenario, renders it with the
 * real tool, asks the server and checks the product. A new family adds a file and a line in the
 * `renderers` table (renderers.ts).
 */
export interface RendererFamily<S extends ScenarioBase = ScenarioBase> {
  /** How the agreement line names the family's scenarios: `Helm charts`. */
  readonly label: string;
  /** The fewest scenarios the family must count. */
  readonly minimum: number;
  /** The family's own fields of a scenario, checked; the common ones are already. */
  parse(raw: Record<string, unknown>, base: ScenarioBase, where: string, doc: RenderedFile): S;
  /** The tool's path, or undefined when the test was skipped for the lack of it. */
  tool(t: TestContext, scenario: S): string | undefined;
  /** Runs the scenario; throws (an assertion) where the product and the server part. */
  run(scenario: S, tool: string, context: ScenarioContext): Promise<void>;
  /**
   * Writes the scenario's sources and replays its history, and says how a user checks them in the
   * editor and with `check` (test/protocol/editor-and-cli-agree-rendered.test.ts).
   */
  prepare(scenario: S, tool: string, context: ScenarioContext): Promise<CheckedSources>;
  /** After every scenario ran. */
  close?(): void;
}

/** Every rendered scenario of every family, checked as far as the loader and the family can. */
export function loadRenderedScenarios(
  families: Readonly<Record<string, RendererFamily>>,
  dir = renderedDir,
): ScenarioBase[] {
  const out: ScenarioBase[] = [];
  const names = new Set<string>();
  if (!fs.existsSync(dir)) return out;
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const doc = parseYaml(fs.readFileSync(path.join(dir, file), 'utf8')) as RenderedFile;
    if (!doc || !Array.isArray(doc.scenarios)) throw new Error(`${file}: needs a list under scenarios:`);
    for (const raw of doc.scenarios) {
      const where = `${file}: ${String(raw.name)}`;
      if (typeof raw.name !== 'string' || raw.name === '') throw new Error(`${file}: a scenario without a name`);
      if (names.has(raw.name)) throw new Error(`${where}: the name is used twice`);
      names.add(raw.name);
      if (typeof raw.renderer !== 'string' || !families[raw.renderer])
        throw new Error(`${where}: renderer must be one of ${Object.keys(families).join(', ')}`);
      if (!['accepted', 'fieldConflict', 'alreadyExists', 'rejected'].includes(raw.server as string))
        throw new Error(`${where}: server must be accepted, fieldConflict, alreadyExists or rejected`);
      if (raw.excluded !== undefined && (typeof raw.excluded !== 'string' || raw.excluded.trim() === ''))
        throw new Error(`${where}: excluded needs a written reason`);
      const base: ScenarioBase = {
        name: raw.name,
        renderer: raw.renderer,
        server: raw.server as ScenarioBase['server'],
        file,
        ...(typeof raw.about === 'string' ? { about: raw.about } : {}),
        ...(typeof raw.excluded === 'string' ? { excluded: raw.excluded } : {}),
      };
      out.push(families[raw.renderer]!.parse(raw, base, where, doc));
    }
  }
  return out;
}

/** `${namespace}` replaced in every string of a value. */
export function inNamespace<T>(value: T, namespace: string): T {
  return JSON.parse(JSON.stringify(value).replaceAll('${namespace}', namespace)) as T;
}
