// The repository a file is in (server/src/render/git-repository.ts), on repositories made by the
// real git: its top, the file's path from there, the remotes with origin first — for a plain clone,
// a worktree and a submodule-style `.git` file — and nothing read from a hostile `.git`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { applierOfFile, gitRepositoryOf, remotesInConfig } from '../../../server/src/render/git-repository';
import type { RepositorySource } from '../../../server/src/core/gitops/repository';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-git-repository-'));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
};

test('a clone: its top, the path from there, and its remotes with origin first', () => {
  const top = path.join(dir, 'clone');
  fs.mkdirSync(top);
  git(top, 'init', '-q');
  git(top, 'remote', 'add', 'upstream', 'https://github.com/upstream/shop.git');
  git(top, 'remote', 'add', 'origin', 'git@github.com:org/shop.git');
  const file = write(path.join(top, 'apps', 'shop', 'web.yaml'), 'kind: ConfigMap\n');
  assert.deepEqual(gitRepositoryOf(file), {
    top,
    path: 'apps/shop/web.yaml',
    remotes: ['git@github.com:org/shop.git', 'https://github.com/upstream/shop.git'],
  });
});

test("a worktree: its `.git` file leads to the main repository's remotes", () => {
  const main = path.join(dir, 'main-repo');
  fs.mkdirSync(main);
  git(main, 'init', '-q');
  git(main, 'remote', 'add', 'origin', 'https://github.com/org/shop.git');
  write(path.join(main, 'a.yaml'), 'kind: ConfigMap\n');
  git(main, 'add', '.');
  git(main, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first');
  const worktree = path.join(dir, 'worktree');
  git(main, 'worktree', 'add', '-q', worktree);
  assert.ok(fs.statSync(path.join(worktree, '.git')).isFile(), 'git made a .git file');
  const repository = gitRepositoryOf(path.join(worktree, 'a.yaml'));
  assert.equal(repository?.top, worktree);
  assert.equal(repository?.path, 'a.yaml');
  assert.deepEqual(repository?.remotes, ['https://github.com/org/shop.git']);
});

test('a file in no repository, and a hostile `.git`, give no repository', () => {
  const plain = path.join(dir, 'plain');
  assert.equal(gitRepositoryOf(write(path.join(plain, 'web.yaml'), 'kind: ConfigMap\n')), undefined);
  // A `.git` file pointing nowhere, and one far too large: refused, nothing thrown.
  const broken = path.join(dir, 'broken');
  write(path.join(broken, '.git'), 'gitdir: /nonexistent/place\n');
  assert.equal(gitRepositoryOf(write(path.join(broken, 'web.yaml'), '')), undefined);
  const huge = path.join(dir, 'huge');
  write(
    path.join(huge, '.git', 'config'),
    `[remote "origin"]\n url = https://github.com/org/x\n${'#'.repeat(300_000)}\n`,
  );
  assert.equal(gitRepositoryOf(write(path.join(huge, 'web.yaml'), '')), undefined);
  // A FIFO as the config: refused without waiting on it.
  const fifo = path.join(dir, 'fifo');
  fs.mkdirSync(path.join(fifo, '.git'), { recursive: true });
  execFileSync('mkfifo', [path.join(fifo, '.git', 'config')]);
  assert.equal(gitRepositoryOf(write(path.join(fifo, 'web.yaml'), '')), undefined);
});

test("a config's remotes as git reads them: quotes, escapes, comments, the old section form", () => {
  const text = [
    '[core]',
    '\turl = https://not-a-remote.example.com/x',
    '[remote "fork"]',
    '\turl = "https://github.com/me/shop.git" # my fork',
    '[remote.origin]',
    '\tURL = git@github.com:org/shop.git ; the real one',
    '[remote "with \\"quote\\""]',
    '\turl = https://example.com/q.git',
  ].join('\n');
  assert.deepEqual(remotesInConfig(text), [
    'git@github.com:org/shop.git',
    'https://github.com/me/shop.git',
    'https://example.com/q.git',
  ]);
});

test('the applier of a file: named outright, or (auto) the source whose repository is a remote of the file’s and whose path holds it', () => {
  const top = path.join(dir, 'fleet');
  fs.mkdirSync(top);
  git(top, 'init', '-q');
  git(top, 'remote', 'add', 'origin', 'git@github.com:org/fleet.git');
  const plain = write(path.join(top, 'apps', 'web.yaml'), 'kind: ConfigMap\n');
  const overlaid = write(path.join(top, 'shop', 'web.yaml'), 'kind: ConfigMap\n');
  write(path.join(top, 'shop', 'kustomization.yaml'), 'resources: [web.yaml]\n');
  const source = (p: string, url = 'https://github.com/org/fleet'): RepositorySource => ({
    applier: { kind: 'flux-kustomize', name: 'apps', namespace: 'flux-system' },
    repoURL: url,
    path: p,
  });
  const read = (...sources: RepositorySource[]) => ({ sources, policies: [] });
  assert.equal(applierOfFile('auto', plain, undefined, read(source('./apps')))?.name, 'flux');
  assert.equal(
    applierOfFile('auto', overlaid, undefined, read(source('./shop')))?.name,
    'flux',
    'through its kustomization',
  );
  assert.equal(applierOfFile('auto', plain, undefined, read(source('./shop'))), undefined, 'outside the path');
  assert.equal(
    applierOfFile('auto', plain, undefined, read(source('./apps', 'https://github.com/org/other'))),
    undefined,
    'another repository',
  );
  assert.equal(applierOfFile('auto', plain, undefined, undefined), undefined, 'the sources not read yet');
  assert.equal(applierOfFile('kubectl', plain, undefined, read(source('./apps'))), undefined);
  assert.equal(applierOfFile('argocd-ssa', plain, undefined, undefined)?.name, 'argocd-ssa');
  const outside = write(path.join(dir, 'loose', 'web.yaml'), 'kind: ConfigMap\n');
  assert.equal(applierOfFile('auto', outside, undefined, read(source('.'))), undefined, 'in no repository');
});
