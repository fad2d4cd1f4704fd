// What a user gets for a command line that cannot work, and for a cluster that cannot be reached:
// exit 2 and one line on stderr saying why — before any file or cluster is touched where possible.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { runCli, scratchDir, writeFiles } from './cli-process';

const dir = scratchDir('args');
writeFiles(dir, {
  'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n',
  'empty/README.md': 'no manifests here\n',
});
const manifest = path.join(dir, 'cm.yaml');

const usageErrors: { args: string[]; says: RegExp }[] = [
  { args: [], says: /no command: use check, snapshot or lsp \(see --help\)/ },
  { args: ['lint', manifest], says: /unknown command "lint": use check, snapshot or lsp \(see --help\)/ },
  { args: ['check'], says: /check needs manifests/ },
  { args: ['check', '--bogus', manifest], says: /Unknown option '--bogus'/ },
  {
    args: ['check', '--mode', 'replace', manifest],
    says: /--mode must be one of serverSide, clientSide, create \(got "replace"\)/,
  },
  {
    args: ['check', '--format', 'xml', manifest],
    says: /--format must be one of text, json, sarif, github, gitlab \(got "xml"\)/,
  },
  { args: ['check', '--mode'], says: /argument missing/ },
  { args: ['check', '--field-manager', ' ', manifest], says: /--field-manager needs a value/ },
  {
    args: ['check', '--verify', '--mode', 'clientSide', manifest],
    says: /--verify confirms --mode serverSide or create/,
  },
  {
    args: ['check', '--verify', '--snapshot', dir, manifest],
    says: /--verify asks the cluster, --snapshot reads none/,
  },
  { args: ['check', '--snapshot', dir, '--context', 'admin', manifest], says: /--snapshot reads no cluster/ },
  { args: ['check', '--out', dir, manifest], says: /--out is an option of snapshot/ },
  { args: ['check', path.join(dir, 'missing.yaml')], says: /no such file or directory: .*missing\.yaml/ },
  { args: ['check', path.join(dir, 'empty')], says: /no manifests \(\*\.yaml, \*\.yml, \*\.json\) under .*empty/ },
  { args: ['check', '--snapshot', path.join(dir, 'no-snapshot'), manifest], says: /no such snapshot directory/ },
  { args: ['check', '--kubeconfig', path.join(dir, 'no-kubeconfig'), manifest], says: /kubeconfig: .*no-kubeconfig/ },
  { args: ['snapshot', manifest], says: /snapshot needs --out <dir>/ },
  { args: ['snapshot', '--out', path.join(dir, 'snap')], says: /snapshot needs manifests/ },
  {
    args: ['snapshot', '--out', dir, '--mode', 'create', manifest],
    says: /--mode is an option of check, not of snapshot/,
  },
  {
    args: ['check', '--min-severity', 'info', manifest],
    says: /--min-severity must be one of error, warning, information \(got "info"\)/,
  },
  {
    args: ['check', '--verbose', '--min-severity', 'error', manifest],
    says: /--verbose prints information findings, --min-severity error leaves them out/,
  },
  { args: ['snapshot', '--out', dir, '--verbose', manifest], says: /--verbose is an option of check, not of snapshot/ },
  {
    args: ['check', '--applier', 'argo', manifest],
    says: /--applier must be one of auto, kubectl, helm, argocd, argocd-ssa, flux, flux-helm \(got "argo"\)/,
  },
  {
    args: ['check', '--applier', 'flux', '--field-manager', 'me', manifest],
    says: /--applier flux sends the manifests its own way \(its field manager and mode\): --field-manager goes with --applier kubectl/,
  },
  {
    args: ['check', '--applier', 'argocd-ssa', '--mode', 'create', manifest],
    says: /--applier argocd-ssa sends the manifests its own way .*--mode goes with --applier kubectl/,
  },
  {
    args: ['check', '--applier', 'flux', '--verify', manifest],
    says: /--verify sends your own apply as a dry run, not flux's request/,
  },
  {
    args: ['check', '--applier', 'auto', '--snapshot', dir, manifest],
    says: /--applier auto reads the Kustomizations and Applications of a cluster; a snapshot holds none/,
  },
  { args: ['snapshot', '--out', dir, '--applier', 'flux', manifest], says: /--applier is an option of check/ },
];

for (const { args, says } of usageErrors) {
  test(`usage error: ${args.map((a) => a.replace(dir, 'DIR')).join(' ') || '(no arguments)'}`, async () => {
    const run = await runCli(args);
    assert.equal(run.status, 2, run.stderr);
    assert.equal(run.stdout, '');
    const lines = run.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, `one line, got: ${run.stderr}`);
    assert.match(lines[0]!, /^kube-conflict-hints: /);
    assert.match(lines[0]!, says);
  });
}

test('a reader that stops early (| head) ends the output quietly: no internal error, the exit code stays', async () => {
  for (const args of [['--help'], ['check', '--snapshot', path.join(dir, 'no-snapshot'), manifest]]) {
    const run = await runCli(args, { stdoutClosed: true });
    assert.doesNotMatch(run.stderr, /EPIPE|internal error|Unhandled/, args.join(' '));
    assert.equal(run.status, args[0] === '--help' ? 0 : 2, args.join(' '));
  }
});

test('--help prints the usage with every option and the exit codes, exit 0', async () => {
  const run = await runCli(['--help']);
  assert.equal(run.status, 0);
  for (const option of [
    '--context',
    '--kubeconfig',
    '--namespace',
    '--field-manager',
    '--applier',
    '--mode',
    '--format',
    '--verify',
    '--snapshot',
    '--out',
    '--verbose',
    '--min-severity',
  ]) {
    assert.ok(run.stdout.includes(option), `help mentions ${option}`);
  }
  assert.match(run.stdout, /Exit codes: 0 .* 1 .*\n?.*2 usage error or cluster problem/s);
  assert.equal((await runCli(['check', '--help'])).status, 0);
});

/** A loopback port nobody listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('an unreachable cluster (a closed loopback port) is exit 2 with the server and context named', async () => {
  const port = await closedPort();
  const kubeconfig = path.join(dir, 'closed.kubeconfig');
  writeFiles(dir, {
    'closed.kubeconfig': [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: gone`,
      `  cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}`,
      'users:',
      '- name: someone',
      '  user: {token: not-a-secret}',
      'contexts:',
      '- name: nowhere',
      '  context: {cluster: gone, user: someone}',
      'current-context: nowhere',
      '',
    ].join('\n'),
  });
  for (const args of [
    ['check', manifest],
    ['snapshot', '--out', path.join(dir, 'snap-closed'), manifest],
  ]) {
    const run = await runCli([...args.slice(0, 1), '--kubeconfig', kubeconfig, ...args.slice(1)]);
    assert.equal(run.status, 2, run.stderr);
    assert.equal(run.stdout, '');
    assert.equal(
      run.stderr,
      `kube-conflict-hints: cannot reach the cluster at https://127.0.0.1:${port} (context nowhere): connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
  }
});
