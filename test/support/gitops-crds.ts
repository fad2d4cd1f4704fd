// The CustomResourceDefinitions of the GitOps controllers users run — Argo CD's Application and
// AppProject, Flux's Kustomization and GitRepository — taken from the controllers' own Go modules on the Go module
// proxy (the same source the API server and the rendering tools are built from), at pinned versions,
// and installed into the tests' cluster as the controllers' installs do. Nothing is copied into the
// repository: the module cache keeps the files, and a module that cannot be fetched fails the test
// that asked, with the go command's words.
//
// Why these versions: the newest of each that the machines' Go 1.26 accepts (`go mod download`
// refuses argo-cd v3.6.x and kustomize-controller v1.10.x, which require Go 1.27).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { applyCrd } from '../differential/replay';
import type { Connection, KubeObject } from './seed';

interface CrdSource {
  readonly module: string;
  readonly version: string;
  /** Paths inside the module. */
  readonly files: readonly string[];
}

export const gitopsCrdSources: readonly CrdSource[] = [
  {
    module: 'github.com/argoproj/argo-cd/v3',
    version: 'v3.5.7',
    files: ['manifests/crds/application-crd.yaml', 'manifests/crds/appproject-crd.yaml'],
  },
  {
    module: 'github.com/fluxcd/kustomize-controller',
    version: 'v1.9.6',
    files: ['config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml'],
  },
  {
    // The GitRepository a Kustomization's sourceRef names: its URL is the repository (check --applier auto).
    module: 'github.com/fluxcd/source-controller',
    version: 'v1.9.6',
    files: ['config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml'],
  },
];

/** Where `go mod download` put a module (fetching it the first time). */
function moduleDir(source: CrdSource): string {
  // Outside any go.mod, so the repository's tool modules are not touched.
  const result = spawnSync('go', ['mod', 'download', '-json', `${source.module}@${source.version}`], {
    cwd: os.tmpdir(),
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod', GO111MODULE: 'on' },
    timeout: 600_000,
  });
  let answer: { Dir?: string; Error?: string } = {};
  try {
    answer = JSON.parse(result.stdout) as typeof answer;
  } catch {
    // handled below
  }
  if (result.status !== 0 || !answer.Dir)
    throw new Error(
      `cannot fetch ${source.module}@${source.version} from the Go module proxy: ${answer.Error ?? (result.stderr || result.error?.message || 'no answer')}`,
    );
  return answer.Dir;
}

/** The CRD objects, parsed from the modules' files. */
export function gitopsCrds(): KubeObject[] {
  const crds: KubeObject[] = [];
  for (const source of gitopsCrdSources) {
    const dir = moduleDir(source);
    for (const file of source.files) {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      for (const doc of parseAllDocuments(text)) {
        const value = doc.toJS() as KubeObject | null;
        if (value?.kind === 'CustomResourceDefinition') crds.push(value);
      }
    }
  }
  return crds;
}

/**
 * Installs the GitOps CRDs (idempotent) and returns once each is Established with its OpenAPI
 * published, so objects of them can be written and read at once.
 */
export async function installGitopsCrds(conn: Connection): Promise<void> {
  for (const crd of gitopsCrds()) await applyCrd(conn, crd);
}
