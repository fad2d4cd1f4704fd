// Which kubeconfig, which context, which namespace: the choices kubectl users expect to carry over.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { createClusterConnection, readKubeconfig } from '../../../server/src/cluster';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-kubeconfig-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function kubeconfigFile(
  name: string,
  body: { clusters: [string, string][]; contexts: [string, string, string?][]; current?: string },
): string {
  const file = path.join(dir, name);
  const lines = ['apiVersion: v1', 'kind: Config', 'clusters:'];
  for (const [cluster, server] of body.clusters)
    lines.push(`- name: ${cluster}`, '  cluster:', `    server: ${server}`);
  lines.push('users:', '- name: me', '  user:', '    token: secret-token');
  lines.push('contexts:');
  for (const [context, cluster, namespace] of body.contexts) {
    lines.push(`- name: ${context}`, '  context:', `    cluster: ${cluster}`, '    user: me');
    if (namespace) lines.push(`    namespace: ${namespace}`);
  }
  if (body.current) lines.push(`current-context: ${body.current}`);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const first = kubeconfigFile('first.yaml', {
  clusters: [['prod', 'https://prod.example:6443']],
  contexts: [
    ['prod', 'prod', 'shop'],
    ['shared', 'prod'],
  ],
  current: 'prod',
});
const second = kubeconfigFile('second.yaml', {
  clusters: [
    ['prod', 'https://other.example:6443'],
    ['dev', 'https://dev.example:6443'],
  ],
  contexts: [
    ['dev', 'dev'],
    ['shared', 'dev', 'ignored'],
  ],
  current: 'dev',
});
const missing = path.join(dir, 'missing.yaml');
const env = { KUBECONFIG: [first, missing, '', second].join(path.delimiter) };

describe('kubeconfig files', () => {
  test('KUBECONFIG with several paths merges like kubectl: the first definition and current-context win', async () => {
    const read = await readKubeconfig({}, env);
    assert.ok(read.ok, JSON.stringify(read));
    assert.deepEqual(read.value.files, [first, second]);
    assert.equal(read.value.currentContext, 'prod');
    assert.deepEqual(
      read.value.contexts.map((c) => [c.name, c.server, c.namespace]),
      [
        ['prod', 'https://prod.example:6443', 'shop'],
        ['shared', 'https://prod.example:6443', undefined],
        ['dev', 'https://dev.example:6443', undefined],
      ],
    );
  });

  test('an explicit path replaces KUBECONFIG', async () => {
    const read = await readKubeconfig({ kubeconfig: second }, env);
    assert.ok(read.ok);
    assert.equal(read.value.currentContext, 'dev');
    assert.deepEqual(read.value.files, [second]);
  });

  test('no kubeconfig at all is a configuration problem, not an exception', async () => {
    const read = await readKubeconfig({}, { KUBECONFIG: missing });
    assert.ok(!read.ok);
    assert.equal(read.problem.kind, 'configuration');
    const connection = await createClusterConnection({}, { env: { KUBECONFIG: missing } });
    assert.equal(connection.health().state, 'unreachable');
    assert.equal(connection.health().problem?.kind, 'configuration');
    assert.deepEqual(connection.peekObject({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }), {
      state: 'failed',
      problem: connection.health().problem,
    });
  });
});

describe('context and namespace', () => {
  const rows: {
    name: string;
    settings: { context?: string; namespace?: string };
    context: string;
    server: string;
    namespace: string;
  }[] = [
    {
      name: 'the current context and its namespace',
      settings: {},
      context: 'prod',
      server: 'https://prod.example:6443',
      namespace: 'shop',
    },
    {
      name: 'a chosen context without a namespace uses "default"',
      settings: { context: 'dev' },
      context: 'dev',
      server: 'https://dev.example:6443',
      namespace: 'default',
    },
    {
      name: 'the namespace setting wins over the context',
      settings: { context: 'prod', namespace: 'team-a' },
      context: 'prod',
      server: 'https://prod.example:6443',
      namespace: 'team-a',
    },
  ];
  for (const row of rows) {
    test(row.name, async () => {
      const connection = await createClusterConnection(row.settings, { env });
      try {
        assert.equal(connection.context?.name, row.context);
        assert.equal(connection.context?.server, row.server);
        assert.equal(connection.defaultNamespace, row.namespace);
        assert.equal(connection.health().state, 'unknown', 'no request was sent just by connecting');
        assert.equal(connection.requestsSent(), 0);
      } finally {
        connection.dispose();
      }
    });
  }

  test("a server or proxy that is not a URL is the kubeconfig's problem, said without quoting it", async () => {
    const file = kubeconfigFile('not-urls.yaml', {
      clusters: [
        ['spaced', '"https://alice:pw@exa mple:6443"'],
        ['schemeless', '127.0.0.1:6443'],
        ['proxied', 'https://prod.example:6443'],
      ],
      contexts: [
        ['spaced', 'spaced'],
        ['schemeless', 'schemeless'],
        ['proxied', 'proxied'],
      ],
    });
    fs.writeFileSync(
      file,
      fs
        .readFileSync(file, 'utf8')
        .replace(
          '    server: https://prod.example:6443',
          '    server: https://prod.example:6443\n    proxy-url: "http://u:pw@pro xy:3128"',
        ),
    );
    for (const [context, says] of [
      ['spaced', 'Cluster "spaced" of context "spaced" has a server that is not an http(s) URL.'],
      ['schemeless', 'Cluster "schemeless" of context "schemeless" has a server that is not an http(s) URL.'],
      ['proxied', 'Cluster "proxied" of context "proxied" has a proxy-url that is not a URL.'],
    ] as const) {
      const connection = await createClusterConnection({ kubeconfig: file, context });
      assert.equal(connection.context, undefined);
      assert.deepEqual(connection.health().problem, { kind: 'configuration', message: says });
      connection.dispose();
    }
  });

  test('an unknown context names the ones that exist', async () => {
    const connection = await createClusterConnection({ context: 'staging' }, { env });
    assert.equal(connection.context, undefined);
    assert.match(
      connection.health().problem?.message ?? '',
      /"staging" is not in the kubeconfig \(contexts: prod, shared, dev\)/,
    );
    assert.equal(connection.kubeconfig?.contexts.length, 3, 'the picker still lists the contexts');
  });
});
