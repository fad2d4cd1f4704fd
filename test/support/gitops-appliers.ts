// The GitOps controllers' own apply code, run by the tests against the tests' cluster (it writes:
// this is the controller, not a prediction):
// - Flux kustomize-controller: test/tools/flux-apply, a small Go program on github.com/fluxcd/pkg/ssa
//   with kustomize-controller's ApplyOptions, built here into .cache/tools/flux-apply/ (KCH_FLUX_APPLY
//   names another binary) the way test/tools/tools.ts builds Helm and kustomize: from the Go module
//   proxy, rebuilt only when its go.mod, go.sum or a .go file changes, under a lock;
// - Argo CD: the real kubectl with the flags Argo CD's sync passes (server-side: `--server-side
//   --force-conflicts --field-manager=argocd-controller`; client-side: `--field-manager=argocd-controller`),
//   and RespectIgnoreDifferences as Argo CD's controller does it before handing the target to kubectl:
//   the live values of the ignored paths copied into the target.
import { spawn, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { repoRoot, withLock } from './cluster';
import type { KubeObject } from './seed';

const moduleDir = path.join(repoRoot, 'test', 'tools', 'flux-apply');
const toolsDir = process.env.KCH_TOOLS_DIR ?? path.join(repoRoot, '.cache', 'tools');
const outDir = path.join(toolsDir, 'flux-apply');
const binary = path.join(outDir, 'flux-apply');
const stamp = path.join(outDir, 'build.stamp');

function sourceHash(): string {
  const hash = crypto.createHash('sha256');
  const sources = fs
    .readdirSync(moduleDir)
    .filter((f) => f.endsWith('.go'))
    .sort();
  for (const f of ['go.mod', 'go.sum', ...sources])
    hash
      .update(f)
      .update('\0')
      .update(fs.readFileSync(path.join(moduleDir, f)))
      .update('\0');
  return hash.digest('hex');
}

function isCurrent(): boolean {
  return fs.existsSync(binary) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8').trim() === sourceHash();
}

/** The flux-apply binary: KCH_FLUX_APPLY, or built from test/tools/flux-apply when not current. */
export async function ensureFluxApply(): Promise<string> {
  const override = process.env.KCH_FLUX_APPLY;
  if (override) {
    if (!fs.existsSync(override)) throw new Error(`KCH_FLUX_APPLY=${override}: no such file`);
    return override;
  }
  if (isCurrent()) return binary;
  fs.mkdirSync(outDir, { recursive: true });
  await withLock(path.join(outDir, 'build.lock'), async () => {
    if (isCurrent()) return;
    const partial = `${binary}.partial`;
    const result = spawnSync('go', ['build', '-trimpath', '-buildvcs=false', '-o', partial, '.'], {
      cwd: moduleDir,
      encoding: 'utf8',
      env: { ...process.env, CGO_ENABLED: '0' },
      maxBuffer: 64 << 20,
    });
    fs.writeFileSync(path.join(outDir, 'build.log'), `${result.stdout ?? ''}${result.stderr ?? ''}`);
    if (result.status !== 0)
      throw new Error(
        `building test/tools/flux-apply failed: ${(result.stderr ?? '').trim().split('\n').slice(-1)[0]}`,
      );
    fs.renameSync(partial, binary);
    fs.writeFileSync(stamp, `${sourceHash()}\n`);
  });
  return binary;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], input: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

function ok(what: string, r: Run): string {
  if (r.status !== 0) throw new Error(`${what} failed (${r.status}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

export interface FluxOwner {
  readonly name: string;
  readonly namespace: string;
}

/** kustomize-controller's apply of the objects of `text`, as the Kustomization `owner` (admin's context). */
export async function fluxApply(
  kubeconfig: string,
  text: string,
  owner: FluxOwner,
  options: { force?: boolean; ignore?: readonly string[] } = {},
): Promise<{ changes: { subject: string; action: string }[] }> {
  const bin = await ensureFluxApply();
  const kc = contextKubeconfig(kubeconfig, 'admin');
  const args = ['--kubeconfig', kc, '--name', owner.name, '--namespace', owner.namespace];
  if (options.force) args.push('--force');
  if (options.ignore?.length) args.push('--ignore', options.ignore.join(','));
  const out = ok('flux-apply', await run(bin, args, text));
  const parsed = JSON.parse(out) as { changes: { subject: string; action: string }[]; error?: string };
  if (parsed.error) throw new Error(`flux-apply: ${parsed.error}`);
  return parsed;
}

/** One object's drift as helm-controller's jsondiff saw it, and what correcting it answered. */
export interface HelmDrift {
  readonly subject: string;
  /** create, update, none or exclude (fluxcd/pkg/ssa jsondiff.DiffType). */
  readonly type: string;
  readonly patch?: unknown;
  readonly error?: string;
}

/**
 * helm-controller's drift detection for the Helm release `release` in `namespace` on the objects of
 * `text` (test/tools/flux-apply/helm_drift.go): `enabled` corrects the drift (creates and JSON patches
 * as helm-controller), `warn` only reports it; `install` creates the objects as the release's install.
 */
export async function helmDriftCorrect(
  kubeconfig: string,
  text: string,
  release: FluxOwner,
  mode: 'install' | 'enabled' | 'warn',
): Promise<HelmDrift[]> {
  const bin = await ensureFluxApply();
  const kc = contextKubeconfig(kubeconfig, 'admin');
  const args = ['--kubeconfig', kc, '--name', release.name, '--namespace', release.namespace, '--helm-drift', mode];
  const parsed = JSON.parse(ok('flux-apply --helm-drift', await run(bin, args, text))) as {
    diffs: HelmDrift[];
    error?: string;
  };
  if (parsed.error) throw new Error(`helm drift: ${parsed.error}`);
  const failed = parsed.diffs.find((d) => d.error);
  if (failed) throw new Error(`helm drift correction of ${failed.subject}: ${failed.error}`);
  return parsed.diffs;
}

/** Argo CD's server-side sync of `text`: kubectl as the sync runs it. */
export async function argoServerSideApply(kubeconfig: string, text: string): Promise<string> {
  const args = [
    '--kubeconfig',
    kubeconfig,
    '--context',
    'admin',
    'apply',
    '--server-side',
    '--force-conflicts',
    '--field-manager=argocd-controller',
    '-f',
    '-',
  ];
  return ok('kubectl apply --server-side', await run('kubectl', args, text, { KUBECONFIG: kubeconfig }));
}

/** Argo CD's client-side sync of `text` (its default): kubectl apply as argocd-controller. */
export async function argoClientSideApply(kubeconfig: string, text: string): Promise<string> {
  const args = [
    '--kubeconfig',
    kubeconfig,
    '--context',
    'admin',
    'apply',
    '--field-manager=argocd-controller',
    '-f',
    '-',
  ];
  return ok('kubectl apply', await run('kubectl', args, text, { KUBECONFIG: kubeconfig }));
}

/** A kubeconfig whose current context is `context` (the Go client reads the current one). */
function contextKubeconfig(kubeconfig: string, context: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-flux-apply-'));
  const file = path.join(dir, 'kubeconfig');
  const text = fs.readFileSync(kubeconfig, 'utf8').replace(/^current-context:.*$/m, `current-context: ${context}`);
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}

/**
 * Helm 4's upgrade of a release whose chart renders `text` (the tests' build, KCH_HELM4), server-side
 * and forcing conflicts, as helm-controller runs it with Helm's library. The Helm CLI writes as the
 * field manager `helm` (cmd/helm/helm.go sets kube.ManagedFieldsManager); helm-controller, the same
 * code, writes under its own name.
 */
export async function helmUpgrade(
  kubeconfig: string,
  text: string,
  release: { name: string; namespace: string },
): Promise<string> {
  const helm = process.env.KCH_HELM4 ?? path.join(toolsDir, 'helm4', 'helm');
  if (!fs.existsSync(helm)) throw new Error(`no Helm 4 at ${helm} (KCH_HELM4): test/tools/build.ts builds it`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-helm-upgrade-'));
  try {
    const chart = path.join(dir, 'chart');
    fs.mkdirSync(path.join(chart, 'templates'), { recursive: true });
    fs.writeFileSync(path.join(chart, 'Chart.yaml'), `apiVersion: v2\nname: ${release.name}\nversion: 0.1.0\n`);
    fs.writeFileSync(path.join(chart, 'templates', 'object.yaml'), text);
    const args = [
      'upgrade',
      '--install',
      release.name,
      chart,
      '--namespace',
      release.namespace,
      '--kubeconfig',
      kubeconfig,
      '--kube-context',
      'admin',
      '--server-side=true',
      '--force-conflicts',
    ];
    return ok(
      'helm upgrade',
      await run(helm, args, '', { HELM_CACHE_HOME: dir, HELM_CONFIG_HOME: dir, HELM_DATA_HOME: dir }),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface IgnoreEntry {
  readonly jsonPointers?: readonly string[];
  readonly managedFieldsManagers?: readonly string[];
}

/**
 * What Argo CD's RespectIgnoreDifferences=true does to the target before the sync applies it
 * (argo-cd controller/sync.go normalizeTargetResources): each ignored JSON pointer gets the live
 * value, or goes where the live object has none; for managedFieldsManagers, every plain field
 * (no list item in its path) such a manager owns gets its live value. `status` is never copied.
 */
export function respectIgnoreDifferences(target: KubeObject, live: KubeObject, rules: readonly IgnoreEntry[]): string {
  const out = structuredClone(target) as Record<string, unknown>;
  const steps = (pointer: string) =>
    pointer
      .slice(1)
      .split('/')
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  const read = (obj: unknown, keys: readonly string[]): unknown =>
    keys.reduce<unknown>(
      (v, k) =>
        Array.isArray(v) ? v[Number(k)] : v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined,
      obj,
    );
  const write = (obj: Record<string, unknown>, keys: readonly string[], value: unknown): void => {
    let v: unknown = obj;
    for (const k of keys.slice(0, -1)) {
      const next = Array.isArray(v) ? v[Number(k)] : (v as Record<string, unknown>)[k];
      if (next === undefined) {
        if (value === undefined) return;
        (v as Record<string, unknown>)[k] = {};
      }
      v = Array.isArray(v) ? v[Number(k)] : (v as Record<string, unknown>)[k];
    }
    const last = keys[keys.length - 1]!;
    if (Array.isArray(v)) {
      if (value === undefined) v.splice(Number(last), 1);
      else v[Number(last)] = value;
    } else if (value === undefined) delete (v as Record<string, unknown>)[last];
    else (v as Record<string, unknown>)[last] = value;
  };
  for (const rule of rules) {
    for (const pointer of rule.jsonPointers ?? []) {
      const keys = steps(pointer);
      if (keys[0] === 'status') continue;
      write(out, keys, structuredClone(read(live, keys)));
    }
    for (const manager of rule.managedFieldsManagers ?? []) {
      for (const entry of live.metadata.managedFields ?? []) {
        if (entry.manager !== manager) continue;
        const leaves: string[][] = [];
        const walk = (node: Record<string, unknown>, prefix: string[]): void => {
          for (const [k, child] of Object.entries(node)) {
            if (k === '.' || !k.startsWith('f:')) continue;
            const sub = child as Record<string, unknown>;
            if (Object.keys(sub).length === 0) leaves.push([...prefix, k.slice(2)]);
            else walk(sub, [...prefix, k.slice(2)]);
          }
        };
        walk(entry.fieldsV1 as Record<string, unknown>, []);
        for (const keys of leaves) {
          if (keys[0] === 'status') continue;
          const value = read(live, keys);
          if (value !== undefined) write(out, keys, structuredClone(value));
        }
      }
    }
  }
  return stringify(out);
}
