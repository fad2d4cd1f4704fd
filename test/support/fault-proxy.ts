// An HTTPS proxy in front of the local kube-apiserver that misbehaves on demand, as real clusters and
// the networks in front of them do: a black hole (connections accepted, nothing ever answered),
// throttling (429 with Retry-After), server errors (5xx), failing OpenAPI documents, slow answers,
// watches cut mid-stream, whole objects where metadata only was asked for. Everything else is
// forwarded untouched to the real server, so what the product sees between faults is the real API
// server's behaviour.
//
// TLS is terminated with the local cluster's own serving certificate (it names 127.0.0.1), so a
// kubeconfig needs only its server URL changed (see kubeconfig()). Every request is logged with the
// time it arrived and what it was answered, so tests can assert on what reached "the cluster".
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

export interface ProxiedRequest {
  /** Date.now() when the request arrived at the proxy. */
  at: number;
  method: string;
  path: string;
  query: URLSearchParams;
  watch: boolean;
  /** The fault that answered it, if any. */
  fault?: Fault['kind'];
  /** The status it was answered with (once answered). */
  status?: number;
  /** Date.now() when the answer's head was sent. */
  answeredAt?: number;
}

export type RequestMatcher = (request: { method: string; path: string; query: URLSearchParams }) => boolean;

export type Fault =
  /** Accept connections, read nothing, answer nothing (requests on open connections too). */
  | { kind: 'blackhole' }
  /** Answer with this status (a Kubernetes Status body unless `body` says otherwise). */
  | {
      kind: 'status';
      status: number;
      retryAfterSeconds?: number;
      body?: (req: http.IncomingMessage) => string;
      match?: RequestMatcher;
    }
  /** Forward, but only after a delay. */
  | { kind: 'slow'; delayMs: number; match?: RequestMatcher }
  /** Cut every watch right after the server starts answering it. */
  | { kind: 'cutWatches' }
  /**
   * Forward with `Accept: application/json`, as a server or a proxy that does not know the
   * metadata-only form (`as=PartialObjectMetadata`) answers: whole objects, values and all.
   */
  | { kind: 'wholeObjects'; match?: RequestMatcher };

export interface FaultProxy {
  /** https://127.0.0.1:PORT */
  readonly server: string;
  readonly requests: readonly ProxiedRequest[];
  /** Replace the active faults (none: a healthy pass-through). */
  set(...faults: Fault[]): void;
  heal(): void;
  /** Cut the watches open now; returns how many. */
  cutWatches(): number;
  /** Resolves with the first logged request (from index `from`) that matches, looking again at each arrival and answer. */
  waitForRequest(
    matches: (r: ProxiedRequest) => boolean,
    options?: { from?: number; timeoutMs?: number },
  ): Promise<ProxiedRequest>;
  /** A copy of `kubeconfig` (written to `out`) whose clusters point at this proxy. */
  kubeconfig(kubeconfig: string, out: string): string;
  close(): Promise<void>;
}

/** The local cluster's PKI, beside its kubeconfig (test/support/cluster.ts). */
function pkiOf(kubeconfig: string): { cert: Buffer; key: Buffer; ca: Buffer } {
  const dir = path.join(path.dirname(kubeconfig), 'pki');
  return {
    cert: fs.readFileSync(path.join(dir, 'server.crt')),
    key: fs.readFileSync(path.join(dir, 'server.key')),
    ca: fs.readFileSync(path.join(dir, 'ca.crt')),
  };
}

export async function startFaultProxy(target: string, clusterKubeconfig: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const pki = pkiOf(clusterKubeconfig);
  const agent = new https.Agent({ ca: pki.ca, keepAlive: true });
  let faults: Fault[] = [];
  const requests: ProxiedRequest[] = [];
  const requestWaiters = new Set<() => void>();
  /** Sockets and exchanges a black hole is holding: released (destroyed) on heal and close. */
  const held = new Set<{ destroy(): void }>();
  const watches = new Set<http.ServerResponse>();
  const sockets = new Set<net.Socket>();

  const active = <K extends Fault['kind']>(kind: K): Extract<Fault, { kind: K }>[] =>
    faults.filter((f): f is Extract<Fault, { kind: K }> => f.kind === kind);

  const tls = https.createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://proxy');
    const entry: ProxiedRequest = {
      at: Date.now(),
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      watch: url.searchParams.get('watch') === 'true',
    };
    requests.push(entry);
    for (const wake of [...requestWaiters]) wake();
    const answered = (status: number) => {
      entry.status = status;
      entry.answeredAt = Date.now();
      for (const wake of [...requestWaiters]) wake();
    };
    const shape = { method: entry.method, path: entry.path, query: entry.query };

    if (active('blackhole').length > 0) {
      entry.fault = 'blackhole';
      held.add(req.socket);
      return;
    }
    const status = active('status').find((f) => !f.match || f.match(shape));
    if (status) {
      entry.fault = 'status';
      req.resume();
      const body = status.body
        ? status.body(req)
        : JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            code: status.status,
            reason: reasonOf(status.status),
            message: `injected ${status.status} for ${entry.path}`,
          });
      const headers: http.OutgoingHttpHeaders = { 'Content-Type': status.body ? 'text/plain' : 'application/json' };
      if (status.retryAfterSeconds !== undefined) headers['Retry-After'] = String(status.retryAfterSeconds);
      answered(status.status);
      res.writeHead(status.status, headers);
      res.end(body);
      return;
    }
    const slow = active('slow').find((f) => !f.match || f.match(shape));
    if (slow) entry.fault = 'slow';
    if (active('wholeObjects').some((f) => !f.match || f.match(shape))) {
      entry.fault = 'wholeObjects';
      req.headers.accept = 'application/json';
    }
    const go = () => forward(req, res, entry, answered);
    if (slow) {
      const timer = setTimeout(go, slow.delayMs);
      res.on('close', () => clearTimeout(timer));
    } else go();
  });

  function forward(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    entry: ProxiedRequest,
    answered: (status: number) => void,
  ): void {
    const headers = { ...req.headers, host: upstream.host };
    const out = https.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent },
      (answer) => {
        answered(answer.statusCode ?? 0);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (entry.watch && (answer.statusCode ?? 0) < 300) {
          watches.add(res);
          res.on('close', () => watches.delete(res));
          if (active('cutWatches').length > 0) {
            entry.fault = 'cutWatches';
            res.flushHeaders();
            setImmediate(() => res.destroy());
          }
        }
        answer.pipe(res);
        res.on('close', () => answer.destroy());
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
    res.on('close', () => out.destroy());
  }

  // In front of TLS: a black hole swallows connections before any handshake.
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (active('blackhole').length > 0) {
      held.add(socket);
      return;
    }
    tls.emit('connection', socket);
  });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = front.address() as net.AddressInfo;

  const releaseHeld = () => {
    for (const h of held) h.destroy();
    held.clear();
  };

  const set = (...next: Fault[]) => {
    if (active('blackhole').length > 0 && !next.some((f) => f.kind === 'blackhole')) releaseHeld();
    faults = next;
  };
  return {
    server: `https://127.0.0.1:${port}`,
    requests,
    set,
    heal: () => set(),
    cutWatches() {
      const open = [...watches];
      for (const res of open) res.destroy();
      return open.length;
    },
    waitForRequest(matches, options = {}) {
      const from = options.from ?? 0;
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = requests.slice(from).find(matches);
          if (!found) return;
          clearTimeout(timer);
          requestWaiters.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          requestWaiters.delete(check);
          reject(new Error('the proxy saw no such request in time'));
        }, options.timeoutMs ?? 30_000);
        requestWaiters.add(check);
        check();
      });
    },
    kubeconfig(kubeconfig, out) {
      const config = parseYaml(fs.readFileSync(kubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] };
      for (const entry of config.clusters) entry.cluster.server = `https://127.0.0.1:${port}`;
      fs.writeFileSync(out, stringifyYaml(config), { mode: 0o600 });
      return out;
    },
    async close() {
      faults = [];
      releaseHeld();
      const closed = new Promise<void>((resolve) => front.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      tls.close();
      agent.destroy();
      await closed;
    },
  };
}

function reasonOf(status: number): string {
  if (status === 429) return 'TooManyRequests';
  if (status === 503) return 'ServiceUnavailable';
  if (status === 504) return 'Timeout';
  return 'InternalError';
}
