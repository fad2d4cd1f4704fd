// The scenarios of issue 6, shared by the code-server suite (test/e2e) and the desktop VS Code suite
// (test/vscode): the cluster history, the file the user holds, the settings, and what the user should
// then see. What the user should see is never written from our own idea of Server-Side Apply: it is
// the real API server's dry-run answer to the request the user's kubectl would send, mapped onto the
// keys of the file. Nothing here drives an editor.
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import {
  apply,
  configMap,
  create,
  deleteObject,
  freshNamespace,
  get,
  objectOf,
  patch,
  type ApiResult,
  type Connection,
  type KubeObject,
} from '../support/seed';
import { editedAndAutoscaled } from '../support/seed-scenarios';

export type ApplyMode = 'serverSide' | 'clientSide' | 'create';

/** The manager `kubectl apply --server-side` uses, and the extension's default fieldManager. */
export const userFieldManager = 'kubectl';
export const diagnosticSource = 'kube-conflict-hints';

/** A problem as an editor shows it, whichever editor. */
export interface SeenProblem {
  severity: 'error' | 'warning' | 'info';
  message: string;
  source?: string;
  /** 1-based. */
  line?: number;
}

/** What the user should see on one key. */
export interface ExpectedProblem {
  severity: 'error' | 'warning';
  /** 1-based line of the key the problem sits on. */
  line: number;
  /** Texts the message contains: the server's own words (a manager, a status message). */
  includes: string[];
}

export interface ScenarioFile {
  /** Path in the workspace folder. */
  path: string;
  text: string;
}

/** The settings a scenario needs besides the cluster connection. */
export type ScenarioSettings = Record<string, unknown>;

export function settingsFor(kubeconfig: string, context = 'admin', extra: ScenarioSettings = {}): ScenarioSettings {
  return { 'kubeConflictHints.kubeconfig': kubeconfig, 'kubeConflictHints.context': context, ...extra };
}

export function toYaml(object: KubeObject): string {
  return stringifyYaml(object);
}

/** 1-based line of the `occurrence`-th `key:` in a YAML text (also as the first key of a list item). */
export function lineOfKey(text: string, key: string, occurrence = 0): number {
  const pattern = new RegExp(`^\\s*(?:-\\s+)?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:`);
  let seen = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (pattern.test(lines[i] ?? '') && seen++ === occurrence) return i + 1;
  }
  throw new Error(`no key "${key}" (occurrence ${occurrence}) in:\n${text}`);
}

/** `.spec.template.spec.containers[name="app"].image` → `image`: the key the user sees. */
export function lastKey(serverPath: string): string {
  const match = /\.([^.[\]]+)$/.exec(serverPath);
  if (!match?.[1]) throw new Error(`no key at the end of ${serverPath}`);
  return match[1];
}

/**
 * The server's answer to `kubectl apply --server-side` of `text` (dryRun=All), as errors on the keys
 * it names: one per conflict cause, carrying the manager the server names.
 */
export async function expectedConflicts(conn: Connection, text: string): Promise<ExpectedProblem[]> {
  const answer = await apply(conn, userFieldManager, parseYaml(text) as KubeObject, { dryRun: true });
  if (answer.ok) return [];
  if (answer.status !== 409) throw new Error(`dry-run apply answered ${answer.status}: ${answer.failure.message}`);
  return (answer.failure.details?.causes ?? []).map((cause) => ({
    severity: 'error',
    line: lineOfKey(text, lastKey(cause.field ?? '')),
    includes: [(cause.message ?? '').replace(/^conflict with /, '')],
  }));
}

function failureMessage(answer: ApiResult, what: string, status: number): string {
  if (answer.ok || answer.status !== status) throw new Error(`${what} answered ${answer.status}, expected ${status}`);
  return answer.failure.message ?? '';
}

/**
 * Compares what an editor shows (errors and warnings of this extension) with what is expected; returns
 * why they differ, or undefined when they agree.
 */
export function mismatch(seen: readonly SeenProblem[], expected: readonly ExpectedProblem[]): string | undefined {
  const ours = seen.filter((p) => (p.source === undefined || p.source === diagnosticSource) && p.severity !== 'info');
  if (ours.length !== expected.length) return `expected ${expected.length} problems, the editor shows ${ours.length}`;
  for (const want of expected) {
    const found = ours.find(
      (p) =>
        p.severity === want.severity && p.line === want.line && want.includes.every((text) => p.message.includes(text)),
    );
    if (!found) return `no ${want.severity} on line ${want.line} containing ${JSON.stringify(want.includes)}`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// The scenarios

export interface ConflictScenario {
  namespace: string;
  file: ScenarioFile;
  /** Two errors: replicas (the autoscaler, through the scale subresource) and image (kubectl edit). */
  expected: ExpectedProblem[];
  /** Hovering this key names its owner. */
  hover: { word: string; includes: string[] };
  /** The quick fix on this key removes it from the manifest. */
  fix: { word: string; title: RegExp };
}

/**
 * A Deployment applied with `kubectl apply --server-side`, its image changed with `kubectl edit`, and
 * scaled by an autoscaler: re-applying the file conflicts on `replicas` and on `image`.
 */
export async function conflictScenario(conn: Connection, prefix = 'e2e-conflicts'): Promise<ConflictScenario> {
  const namespace = await freshNamespace(conn, prefix);
  const history = await editedAndAutoscaled(conn, namespace, 'web');
  const text = toYaml(history.manifest);
  const expected = await expectedConflicts(conn, text);
  if (expected.length !== 2)
    throw new Error(
      `the server reports ${expected.length} conflicts for the edited and autoscaled Deployment, expected 2`,
    );
  return {
    namespace,
    file: { path: 'web-deployment.yaml', text },
    expected,
    hover: { word: 'replicas', includes: ['kube-controller-manager'] },
    fix: { word: 'replicas', title: /^Remove \.spec\.replicas/ },
  };
}

export interface AlreadyExistsScenario {
  namespace: string;
  file: ScenarioFile;
  settings: ScenarioSettings;
  expected: ExpectedProblem[];
}

/** A ConfigMap that exists, and the user's applyMode is `create`: `kubectl create` would get AlreadyExists. */
export async function alreadyExistsScenario(conn: Connection): Promise<AlreadyExistsScenario> {
  const namespace = await freshNamespace(conn, 'e2e-exists');
  const manifest = configMap(namespace, 'settings', { mode: 'safe' });
  objectOf(await create(conn, 'kubectl-create', manifest), 'kubectl create');
  const text = toYaml(manifest);
  const message = failureMessage(
    await create(conn, 'kubectl-create', manifest, { dryRun: true }),
    'dry-run create',
    409,
  );
  return {
    namespace,
    file: { path: 'settings-configmap.yaml', text },
    settings: { 'kubeConflictHints.applyMode': 'create' satisfies ApplyMode },
    expected: [{ severity: 'error', line: lineOfKey(text, 'name'), includes: [message] }],
  };
}

export interface StaleResourceVersionScenario {
  namespace: string;
  file: ScenarioFile;
  expected: ExpectedProblem[];
  fix: { word: string; title: RegExp };
}

/**
 * A manifest saved with the object's resourceVersion, and someone changed the object since (a label
 * of their own, no ownership conflict): the apply would fail the optimistic lock.
 */
export async function staleResourceVersionScenario(conn: Connection): Promise<StaleResourceVersionScenario> {
  const namespace = await freshNamespace(conn, 'e2e-stale');
  const manifest = configMap(namespace, 'limits', { maxConnections: '100' });
  objectOf(await apply(conn, userFieldManager, manifest), 'apply as kubectl');
  const saved = objectOf(await get(conn, manifest), 'read');
  objectOf(
    await patch(conn, 'labeler', manifest, { metadata: { labels: { audited: 'yes' } } }, { type: 'merge' }),
    'label as labeler',
  );
  const held: KubeObject = {
    ...manifest,
    metadata: { ...manifest.metadata, resourceVersion: saved.metadata.resourceVersion ?? '' },
  };
  const text = toYaml(held);
  const message = failureMessage(
    await apply(conn, userFieldManager, held, { dryRun: true }),
    'dry-run apply with the old resourceVersion',
    409,
  );
  return {
    namespace,
    file: { path: 'limits-configmap.yaml', text },
    expected: [{ severity: 'error', line: lineOfKey(text, 'resourceVersion'), includes: [message] }],
    fix: { word: 'resourceVersion', title: /^Remove metadata\.resourceVersion/ },
  };
}

export interface LiveChangeScenario {
  namespace: string;
  file: ScenarioFile;
  /** Another manager takes over `data.mode` while the file is open. */
  takeOver(): Promise<void>;
  /** The object is deleted while the file is open. */
  remove(): Promise<void>;
}

/** A ConfigMap applied by the user, without conflict until another manager takes a field over. */
export async function liveChangeScenario(conn: Connection): Promise<LiveChangeScenario> {
  const namespace = await freshNamespace(conn, 'e2e-live');
  const manifest = configMap(namespace, 'feature-flags', { mode: 'safe', color: 'blue' });
  objectOf(await apply(conn, userFieldManager, manifest), 'apply as kubectl');
  return {
    namespace,
    file: { path: 'feature-flags.yaml', text: toYaml(manifest) },
    async takeOver() {
      const theirs = configMap(namespace, 'feature-flags', { mode: 'turbo' });
      objectOf(await apply(conn, 'flag-operator', theirs, { force: true }), 'force-apply as flag-operator');
    },
    async remove() {
      const answer = await deleteObject(conn, manifest);
      if (!answer.ok) throw new Error(`delete answered ${answer.status}`);
    },
  };
}

/** A base of two overlays: its kustomization and the Deployment `web` it holds. */
export const overlayBase = {
  'base/kustomization.yaml': `resources:
- deployment.yaml
`,
  'base/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx:1.25
`,
};
