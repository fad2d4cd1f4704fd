// The real Helm 4, Helm 3 and kustomize the tests render charts and overlays with, built from the Go
// modules beside this file the way test/support/cluster.ts builds the API server: pinned versions
// (README.md says why these), one binary per tool under .cache/tools/<tool>/, rebuilt only when the
// tool's go.mod, go.sum or link flags change, a build log, and one clear line when the Go module
// proxy cannot be reached. The product itself never uses this Go code.
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { networkFailure, repoRoot, withLock } from '../support/cluster';

const modulesDir = path.join(repoRoot, 'test', 'tools');
/** Everything built lands here; a test of the build itself points it elsewhere. */
export const toolsDir = process.env.KCH_TOOLS_DIR ?? path.join(repoRoot, '.cache', 'tools');
const buildLog = path.join(toolsDir, 'build.log');
const envFile = path.join(toolsDir, 'env.json');

export type ToolName = 'helm4' | 'helm3' | 'kustomize';

interface ToolSpec {
  name: ToolName;
  /** The variable scripts/test.mjs exports the binary's path in. */
  envVar: string;
  /** The module that decides the version (a requirement of the tool's go.mod). */
  module: string;
  /** The main package (the `tool` line of the tool's go.mod). */
  pkg: string;
  /** The file name users know it by, so a test can put its directory on PATH. */
  binary: string;
  /** Link flags as the tool's own release build sets them, from the versions in its go.mod. */
  ldflags: (versions: Map<string, string>) => string;
}

// Helm's release build (its Makefile) stamps the full version; without it `helm version` says only
// "v4.3". Helm 3 also takes the default Kubernetes version of `helm template` (.Capabilities) from
// its client-go minor there; Helm 4 reads it from the build info itself. kustomize reads its version
// from the build info, so it needs no stamp.
const specs: ToolSpec[] = [
  {
    name: 'helm4',
    envVar: 'KCH_HELM4',
    module: 'helm.sh/helm/v4',
    pkg: 'helm.sh/helm/v4/cmd/helm',
    binary: 'helm',
    ldflags: (v) =>
      `-s -w -X helm.sh/helm/v4/internal/version.version=${v.get('helm.sh/helm/v4')} -X helm.sh/helm/v4/internal/version.gitTreeState=clean`,
  },
  {
    name: 'helm3',
    envVar: 'KCH_HELM3',
    module: 'helm.sh/helm/v3',
    pkg: 'helm.sh/helm/v3/cmd/helm',
    binary: 'helm',
    ldflags: (v) => {
      const [, minor] = (v.get('k8s.io/client-go') ?? 'v0.0.0').slice(1).split('.');
      const kube = (pkg: string) => [
        `-X helm.sh/helm/v3/pkg/${pkg}.k8sVersionMajor=1`,
        `-X helm.sh/helm/v3/pkg/${pkg}.k8sVersionMinor=${minor}`,
      ];
      return [
        '-s -w',
        `-X helm.sh/helm/v3/internal/version.version=${v.get('helm.sh/helm/v3')}`,
        '-X helm.sh/helm/v3/internal/version.gitTreeState=clean',
        ...kube('chartutil'),
        ...kube('lint/rules'),
      ].join(' ');
    },
  },
  {
    name: 'kustomize',
    envVar: 'KCH_KUSTOMIZE',
    module: 'sigs.k8s.io/kustomize/kustomize/v5',
    pkg: 'sigs.k8s.io/kustomize/kustomize/v5',
    binary: 'kustomize',
    ldflags: () => '-s -w',
  },
];

/** A failure the command line reports as one line, without a stack trace. */
export class ToolBuildError extends Error {}

export interface BuiltTool {
  name: ToolName;
  envVar: string;
  /** The module version the binary is built from, e.g. v4.3.2. */
  version: string;
  path: string;
}

function log(message: string): void {
  process.stderr.write(`tools: ${message}\n`);
}

function moduleDir(spec: ToolSpec): string {
  return path.join(modulesDir, spec.name);
}

/** The version of every module the tool's go.mod requires. */
function requiredVersions(spec: ToolSpec): Map<string, string> {
  const versions = new Map<string, string>();
  const goMod = fs.readFileSync(path.join(moduleDir(spec), 'go.mod'), 'utf8');
  for (const m of goMod.matchAll(/^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]+\/\S+)\s+(v\S+)/gm))
    versions.set(m[1]!, m[2]!);
  return versions;
}

function binaryPath(spec: ToolSpec): string {
  return path.join(toolsDir, spec.name, spec.binary);
}

function stampPath(spec: ToolSpec): string {
  return path.join(toolsDir, spec.name, 'build.stamp');
}

/** Hash of what decides the binary: go.mod, go.sum, the package, the link flags. */
function sourceHash(spec: ToolSpec): string {
  const hash = crypto.createHash('sha256');
  for (const f of ['go.mod', 'go.sum'])
    hash
      .update(f)
      .update('\0')
      .update(fs.readFileSync(path.join(moduleDir(spec), f)))
      .update('\0');
  hash
    .update(spec.pkg)
    .update('\0')
    .update(spec.ldflags(requiredVersions(spec)));
  return hash.digest('hex');
}

function isCurrent(spec: ToolSpec): boolean {
  const stamp = stampPath(spec);
  return (
    fs.existsSync(binaryPath(spec)) &&
    fs.existsSync(stamp) &&
    fs.readFileSync(stamp, 'utf8').trim() === sourceHash(spec)
  );
}

function goEnv(name: string): string {
  const r = spawnSync('go', ['env', name], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '?';
}

function runGo(spec: ToolSpec, args: string[], what: string): { ok: boolean; output: string } {
  const started = Date.now();
  // CGO_ENABLED=0 as the tools' own release builds; the module and build caches are the machine's
  // (GOMODCACHE, GOCACHE), shared with every other checkout and with the API server's build.
  const result = spawnSync('go', args, {
    cwd: moduleDir(spec),
    encoding: 'utf8',
    env: { ...process.env, CGO_ENABLED: '0' },
    maxBuffer: 64 << 20,
  });
  if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new ToolBuildError(
      'Go is not installed (no `go` on PATH): Helm and kustomize for the tests are built from source with Go >= 1.26',
    );
  }
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.signal ? `go was stopped by ${result.signal}\n` : ''}`;
  fs.appendFileSync(
    buildLog,
    `$ (cd test/tools/${spec.name} && go ${args.join(' ')})   # ${what}, ${((Date.now() - started) / 1000).toFixed(1)} s\n${output}\n`,
  );
  return { ok: result.status === 0, output };
}

function build(spec: ToolSpec): void {
  const versions = requiredVersions(spec);
  const version = versions.get(spec.module) ?? '?';
  const started = Date.now();
  log(`building ${spec.name} ${version} from test/tools/${spec.name} (log: ${buildLog})`);
  // Downloading first and on its own separates "no module proxy" from a compile error.
  const download = runGo(spec, ['mod', 'download'], 'fetch modules');
  if (!download.ok) {
    const firstError = (download.output.split('\n').find((l) => l.trim()) ?? '').trim();
    if (networkFailure.test(download.output)) {
      throw new ToolBuildError(
        `cannot download the Go modules for ${spec.name} (is the Go module proxy reachable? GOPROXY=${goEnv('GOPROXY')}): ${firstError}`,
      );
    }
    throw new ToolBuildError(`\`go mod download\` failed in test/tools/${spec.name}: ${firstError} (log: ${buildLog})`);
  }
  const target = binaryPath(spec);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  // Build beside the target and rename, so a test never runs a half-written binary. -trimpath as the
  // release builds; -buildvcs=false because the module sits inside the project's checkout.
  const partial = `${target}.partial`;
  const built = runGo(
    spec,
    ['build', '-trimpath', '-buildvcs=false', '-ldflags', spec.ldflags(versions), '-o', partial, spec.pkg],
    `build ${spec.name}`,
  );
  if (!built.ok) {
    const tail = built.output.trim().split('\n').slice(-1)[0] ?? '';
    throw new ToolBuildError(`building ${spec.name} failed: ${tail} (log: ${buildLog})`);
  }
  fs.renameSync(partial, target);
  fs.writeFileSync(stampPath(spec), `${sourceHash(spec)}\n`);
  log(`built ${spec.name} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

function describe(spec: ToolSpec): BuiltTool {
  return {
    name: spec.name,
    envVar: spec.envVar,
    version: requiredVersions(spec).get(spec.module) ?? '?',
    path: binaryPath(spec),
  };
}

/** The tools the modules pin, whether built or not. */
export function pinnedTools(): BuiltTool[] {
  return specs.map(describe);
}

/**
 * The path of a tool that scripts/test.mjs built (its KCH_* variable): outside CI a test without it
 * is skipped, under CI=true it fails, as a test without the local API server does.
 */
export function requireTool(t: TestContext, name: ToolName): string | undefined {
  const spec = specs.find((s) => s.name === name)!;
  const file = process.env[spec.envVar];
  if (file && fs.existsSync(file)) return file;
  const why = `no ${name} (${spec.envVar}): run through \`npm test\`, which builds it (test/tools/)`;
  if (process.env.CI === 'true') throw new Error(why);
  t.skip(why);
  return undefined;
}

/**
 * Builds every tool that is not current (a lock keeps two test runs of one checkout from building at
 * once) and writes .cache/tools/env.json, which scripts/test.mjs turns into KCH_HELM4, KCH_HELM3 and
 * KCH_KUSTOMIZE.
 */
export async function ensureTools(): Promise<BuiltTool[]> {
  if (specs.every(isCurrent) && fs.existsSync(envFile)) return specs.map(describe);
  fs.mkdirSync(toolsDir, { recursive: true });
  await withLock(path.join(toolsDir, 'build.lock'), async () => {
    const stale = specs.filter((s) => !isCurrent(s));
    if (stale.length === 0) return;
    if (spawnSync('go', ['version']).error) {
      throw new ToolBuildError(
        'Go is not installed (no `go` on PATH): Helm and kustomize for the tests are built from source with Go >= 1.26',
      );
    }
    fs.writeFileSync(buildLog, '');
    for (const spec of stale) build(spec);
  });
  const built = specs.map(describe);
  fs.writeFileSync(envFile, JSON.stringify(Object.fromEntries(built.map((t) => [t.envVar, t.path])), null, 2) + '\n');
  return built;
}

/** What ensureTools last wrote: variable name → binary path. */
export function readToolsEnv(): Record<string, string> {
  return JSON.parse(fs.readFileSync(envFile, 'utf8')) as Record<string, string>;
}
