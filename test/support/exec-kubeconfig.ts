// A kubeconfig for the test cluster whose credential comes from an exec plugin, as `kubelogin`,
// `gke-gcloud-auth-plugin` or `aws eks get-token` provide it. The plugin appends a line with the
// time (ms since the epoch) to a marker file each time it runs, so a test can tell whether, and
// when, a program named by the kubeconfig ran.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';

export interface ExecKubeconfig {
  /** The kubeconfig file; its only context, `plugin`, is current. */
  readonly file: string;
  /** The file the plugin writes; absent until it first runs. */
  readonly marker: string;
  /** When the plugin ran (ms since the epoch), in order. */
  runs(): number[];
}

/**
 * Writes `<dir>/<name>.kubeconfig`, authenticating as the test cluster's `admin` user through a
 * plugin (node itself, with a script) that writes `<dir>/<name>.ran`.
 */
export function execKubeconfig(clusterKubeconfig: string, dir: string, name: string): ExecKubeconfig {
  const source = parseYaml(fs.readFileSync(clusterKubeconfig, 'utf8')) as {
    clusters: { name: string; cluster: Record<string, unknown> }[];
    users: { name: string; user: { token: string } }[];
  };
  const token = source.users.find((u) => u.name === 'admin')!.user.token;
  const marker = path.join(dir, `${name}.ran`);
  const credential = JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1beta1',
    kind: 'ExecCredential',
    status: { token },
  });
  const script = `require('fs').appendFileSync(${JSON.stringify(marker)}, Date.now() + '\\n'); process.stdout.write(${JSON.stringify(credential)});`;
  const file = path.join(dir, `${name}.kubeconfig`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: source.clusters,
      users: [
        {
          name: 'plugin',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1beta1',
              command: process.execPath,
              args: ['-e', script],
              interactiveMode: 'Never',
            },
          },
        },
      ],
      contexts: [
        { name: 'plugin', context: { cluster: source.clusters[0]!.name, user: 'plugin', namespace: 'default' } },
      ],
      'current-context': 'plugin',
    }),
  );
  return {
    file,
    marker,
    runs: () => (fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean).map(Number) : []),
  };
}
