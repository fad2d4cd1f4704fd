// A plain-HTTP proxy in front of the test kube-apiserver that records every exchange: method, URL,
// the Accept, Content-Type and If-None-Match headers, the request's body and the whole answer, watch streams included. The audit log says what the
// server answered for most requests; it records neither request headers nor watch events, and
// those are what tell whether a watch could carry a Secret's values. The product reaches it through
// a kubeconfig whose server is the proxy (`kubeconfigThroughRecorder`; `recordCluster` starts both),
// and `collectionReads` says what it asked of one collection.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import type { TestUser } from './seed';
import type { TestClusterInfo } from './env';

export interface Exchange {
  method: string;
  /** Path and query as the client sent them. */
  url: string;
  accept: string;
  contentType: string;
  userAgent: string;
  /** The If-None-Match the client sent (an ETag it keeps the answer of), '' for none. */
  ifNoneMatch: string;
  /** What the client sent (a PATCH's body). */
  requestBody: string;
  status?: number;
  /** The answer's ETag, '' for none. */
  etag: string;
  /** The answer so far (a watch keeps adding to it). */
  body: string;
}

export interface RecordingProxy {
  /** http://127.0.0.1:PORT */
  server: string;
  exchanges(): readonly Exchange[];
  stop(): Promise<void>;
}

export async function startRecordingProxy(target: string, ca: Buffer): Promise<RecordingProxy> {
  const exchanges: Exchange[] = [];
  const open = new Set<http.ClientRequest>();
  const server = http.createServer((req, res) => {
    const exchange: Exchange = {
      method: req.method ?? '',
      url: req.url ?? '',
      accept: String(req.headers.accept ?? ''),
      contentType: String(req.headers['content-type'] ?? ''),
      userAgent: String(req.headers['user-agent'] ?? ''),
      ifNoneMatch: String(req.headers['if-none-match'] ?? ''),
      requestBody: '',
      etag: '',
      body: '',
    };
    req.on('data', (chunk: Buffer) => {
      exchange.requestBody += chunk.toString('utf8');
    });
    exchanges.push(exchange);
    const headers = { ...req.headers };
    delete headers.host;
    const upstream = https.request(new URL(req.url ?? '/', target), { method: req.method, headers, ca }, (answer) => {
      exchange.status = answer.statusCode;
      exchange.etag = String(answer.headers.etag ?? '');
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('data', (chunk: Buffer) => {
        exchange.body += chunk.toString('utf8');
        res.write(chunk);
      });
      answer.on('end', () => res.end());
      answer.on('error', () => res.destroy());
    });
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server: `http://127.0.0.1:${port}`,
    exchanges: () => exchanges,
    async stop() {
      for (const request of open) request.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The test cluster's CA and one user's token, from the test kubeconfig. */
export function clusterCredentials(kubeconfig: string, user: string): { ca: Buffer; token: string } {
  const config = parseYaml(fs.readFileSync(kubeconfig, 'utf8')) as {
    clusters: { cluster: { 'certificate-authority-data': string } }[];
    users: { name: string; user: { token: string } }[];
  };
  return {
    ca: Buffer.from(config.clusters[0]!.cluster['certificate-authority-data'], 'base64'),
    token: config.users.find((u) => u.name === user)!.user.token,
  };
}

/** A kubeconfig (context `recorded`) that sends `token` to the recording proxy. */
export function kubeconfigThroughRecorder(proxy: RecordingProxy, token: string, out: string): string {
  fs.writeFileSync(
    out,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // Plain HTTP to the proxy on loopback; client-node asks to say so explicitly.
      clusters: [{ name: 'recorded', cluster: { server: proxy.server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'recorded', user: { token } }],
      contexts: [{ name: 'recorded', context: { cluster: 'recorded', user: 'recorded', namespace: 'default' } }],
      'current-context': 'recorded',
    }),
    { mode: 0o600 },
  );
  return out;
}

/**
 * A recording proxy in front of the test cluster and a kubeconfig at `out` (context `recorded`) that
 * reaches it as `user`: what a test hands the product to see every request it makes. The caller
 * stops the proxy.
 */
export async function recordCluster(
  cluster: TestClusterInfo,
  user: TestUser,
  out: string,
): Promise<{ proxy: RecordingProxy; kubeconfig: string; token: string }> {
  const { ca, token } = clusterCredentials(cluster.kubeconfig, user);
  const proxy = await startRecordingProxy(cluster.server, ca);
  return { proxy, kubeconfig: kubeconfigThroughRecorder(proxy, token, out), token };
}

/** A request to one collection path or to one of its objects' paths, its URL parsed. */
export interface CollectionRequest {
  url: URL;
  exchange: Exchange;
}

/** The requests made to one collection path (`/api/v1/namespaces/NS/configmaps`) and its objects' paths. */
export function collectionRequests(proxy: RecordingProxy, collection: string): CollectionRequest[] {
  return proxy
    .exchanges()
    .map((exchange) => ({ url: new URL(exchange.url, 'http://recorded'), exchange }))
    .filter(({ url }) => url.pathname === collection || url.pathname.startsWith(`${collection}/`));
}

/** A request to a collection as `LIST`, `LIST metadata.name=x`, `WATCH metadata.name=x` or `GET x`. */
export function described({ url }: CollectionRequest, collection: string): string {
  if (url.pathname !== collection) return `GET ${url.pathname.slice(collection.length + 1)}`;
  const verb = url.searchParams.get('watch') === 'true' ? 'WATCH' : 'LIST';
  const selector = url.searchParams.get('fieldSelector');
  return selector ? `${verb} ${selector}` : verb;
}

/** The reads of a collection, in the order they were made, each described(). */
export function collectionReads(proxy: RecordingProxy, collection: string): string[] {
  return collectionRequests(proxy, collection).map((r) => described(r, collection));
}
