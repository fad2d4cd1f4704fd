// A TCP pass-through in front of the test kube-apiserver, so one editor can lose its cluster (the
// proxy stops) while the shared API server keeps serving every other test, and so a test can count
// whether an editor connected at all. TLS goes through untouched: the certificate names 127.0.0.1.
import * as fs from 'node:fs';
import * as net from 'node:net';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

export interface ClusterProxy {
  /** https://127.0.0.1:PORT */
  server: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Refuses new connections and cuts the open ones, as a cluster that went away. */
  stop(): Promise<void>;
}

export async function startClusterProxy(target: string): Promise<ClusterProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    server: `https://127.0.0.1:${address.port}`,
    connections: () => accepted,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** A copy of `kubeconfig` whose clusters point at `server`. */
export function kubeconfigThrough(kubeconfig: string, server: string, out: string): string {
  const config = parseYaml(fs.readFileSync(kubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  for (const entry of config.clusters) entry.cluster.server = server;
  fs.writeFileSync(out, stringifyYaml(config));
  return out;
}
