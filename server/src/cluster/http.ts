// The one place that talks HTTP to the API server. Credentials, CA and proxies come from
// client-node's KubeConfig.applyToHTTPSOptions; this file only sends and receives bytes.
//
// Product code never changes a cluster: a request is either a read (GET) or a dry-run write, and a
// write *cannot* be expressed without `dryRun: 'All'` (the type demands it, and send() writes the
// query parameter itself, whatever the caller's query says).
import * as http from 'node:http';
import * as https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { errorMessage } from './kubeconfig';
import type { HttpOutcome, RequestPurpose } from './problems';

export interface ReadRequest {
  method: 'GET';
  path: string;
  query?: Record<string, string>;
  accept?: string;
  purpose?: Partial<RequestPurpose>;
}

/** A write the server validates, admits and answers, then throws away (dryRun=All). */
export interface DryRunWrite {
  method: 'PATCH' | 'POST';
  dryRun: 'All';
  path: string;
  query?: Record<string, string>;
  contentType: string;
  body: string;
  /** The answer's media type; `application/json` unless said (e.g. metadata only). */
  accept?: string;
  purpose?: Partial<RequestPurpose>;
}

export type ClusterRequest = ReadRequest | DryRunWrite;

export interface TransportOptions {
  /** Idle time after which a request (not a watch) is abandoned as unreachable. */
  requestTimeoutMs: number;
  userAgent: string;
}

export interface StreamHandle {
  /** Resolves when the stream ends: `ended` for a clean end, else the failure. */
  finished: Promise<HttpOutcome | 'ended'>;
  abort(): void;
}

/** Called after every request with its outcome (health tracking, request counting). */
export type OutcomeObserver = (request: ClusterRequest, outcome: HttpOutcome | 'stream-open') => void;

export class ClusterTransport {
  /** Every request sent, including watch connections: tests and the benchmark count them. */
  requestsSent = 0;
  private readonly observers: OutcomeObserver[] = [];
  private readonly agents = new Map<string, http.Agent>();

  constructor(
    private readonly config: KubeConfig,
    private readonly server: string,
    private readonly options: TransportOptions,
  ) {}

  observe(observer: OutcomeObserver): void {
    this.observers.push(observer);
  }

  async send(request: ClusterRequest): Promise<HttpOutcome> {
    const prepared = await this.prepare(request);
    if ('failure' in prepared) return this.report(request, prepared.failure);
    const outcome = await new Promise<HttpOutcome>((resolve) => {
      const req = prepared.module.request(prepared.url, prepared.options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ kind: 'response', status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (error) => resolve(networkOutcome(error)));
      });
      req.setTimeout(this.options.requestTimeoutMs, () => {
        req.destroy(Object.assign(new Error(`no answer from ${this.server} within ${this.options.requestTimeoutMs} ms`), { code: 'ETIMEDOUT' }));
      });
      req.on('error', (error) => resolve(networkOutcome(error)));
      req.end(request.method === 'GET' ? undefined : request.body);
    });
    return this.report(request, outcome);
  }

  /**
   * A long-lived GET whose body is read line by line (watch). A non-2xx answer finishes the stream
   * with that response; a dropped connection finishes it with a network outcome.
   */
  stream(request: ReadRequest, onLine: (line: string) => void): StreamHandle {
    let abort: () => void = () => {};
    let aborted = false;
    let opened = false;
    const finished = (async (): Promise<HttpOutcome | 'ended'> => {
      const prepared = await this.prepare(request);
      if ('failure' in prepared) return this.report(request, prepared.failure);
      if (aborted) return 'ended';
      return new Promise<HttpOutcome | 'ended'>((resolve) => {
        const req = prepared.module.request(prepared.url, prepared.options, (res) => {
          req.setTimeout(0); // connected: from now on silence is normal
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve(this.report(request, { kind: 'response', status, body: Buffer.concat(chunks).toString('utf8') })));
            res.on('error', (error) => resolve(this.report(request, networkOutcome(error))));
            return;
          }
          opened = true;
          this.report(request, 'stream-open');
          let pending = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            pending += chunk;
            let newline = pending.indexOf('\n');
            while (newline >= 0) {
              const line = pending.slice(0, newline).trim();
              pending = pending.slice(newline + 1);
              if (line && !aborted) onLine(line);
              newline = pending.indexOf('\n');
            }
          });
          // Once open, a watch that drops says nothing about the server's health (load balancers
          // close idle connections); the reconnect that follows is what reports.
          res.on('end', () => resolve('ended'));
          res.on('error', (error) => resolve(aborted ? 'ended' : networkOutcome(error)));
          res.on('close', () => resolve(aborted || res.complete ? 'ended' : { kind: 'network', code: 'ECONNRESET', message: 'watch connection closed' }));
        });
        // Until the server answers, the usual request timeout applies (a black-holed address).
        req.setTimeout(this.options.requestTimeoutMs, () => {
          req.destroy(Object.assign(new Error(`no answer from ${this.server} within ${this.options.requestTimeoutMs} ms`), { code: 'ETIMEDOUT' }));
        });
        // A watch is legitimately silent for minutes; TCP keep-alive finds a dead peer instead.
        req.on('socket', (socket) => socket.setKeepAlive(true, 15_000));
        req.on('error', (error) => resolve(aborted ? 'ended' : opened ? networkOutcome(error) : this.report(request, networkOutcome(error))));
        abort = () => req.destroy();
        if (aborted) req.destroy();
        req.end();
      });
    })();
    return {
      finished,
      abort: () => {
        aborted = true;
        abort();
      },
    };
  }

  private async prepare(request: ClusterRequest): Promise<
    { module: typeof https | typeof http; url: URL; options: https.RequestOptions } | { failure: HttpOutcome }
  > {
    this.requestsSent++;
    const url = new URL(this.server.replace(/\/+$/, '') + request.path);
    for (const [key, value] of Object.entries(request.query ?? {})) url.searchParams.set(key, value);
    if (request.method !== 'GET') url.searchParams.set('dryRun', 'All');
    const options: https.RequestOptions = {};
    try {
      await this.config.applyToHTTPSOptions(options);
    } catch (error) {
      // The library throws when an exec credential plugin fails or a certificate file is missing.
      return { failure: { kind: 'network', code: 'EXEC_CREDENTIAL', message: `Cannot get credentials: ${errorMessage(error)}` } };
    }
    options.agent = this.reusableAgent(options.agent);
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    headers['User-Agent'] = this.options.userAgent;
    if (request.method === 'GET') {
      headers.Accept = request.accept ?? 'application/json';
    } else {
      headers.Accept = request.accept ?? 'application/json';
      headers['Content-Type'] = request.contentType;
      headers['Content-Length'] = String(Buffer.byteLength(request.body));
    }
    return {
      module: url.protocol === 'http:' ? http : https,
      url,
      options: { ...options, method: request.method, headers },
    };
  }

  /**
   * client-node builds a new agent for every request, so each request would pay a TCP and TLS
   * handshake (tens of milliseconds). A keep-alive agent with the same TLS material is reused instead;
   * new material (a rotated exec client certificate) gets a new agent. Proxy agents are left alone.
   */
  private reusableAgent(fresh: https.RequestOptions['agent']): https.RequestOptions['agent'] {
    if (!fresh || (fresh.constructor !== https.Agent && fresh.constructor !== http.Agent)) return fresh;
    const tls = (fresh as https.Agent & { options: https.AgentOptions }).options;
    const key = JSON.stringify([fresh.constructor === https.Agent, ...['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'].map((k) => {
      const value: unknown = tls[k as keyof https.AgentOptions];
      return Buffer.isBuffer(value) ? value.toString('base64') : value;
    })]);
    let agent = this.agents.get(key);
    if (!agent) {
      const AgentType = fresh.constructor === https.Agent ? https.Agent : http.Agent;
      agent = new AgentType({ ...tls, keepAlive: true });
      this.agents.set(key, agent);
    }
    fresh.destroy();
    return agent;
  }

  /** Close idle keep-alive connections. */
  dispose(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  private report(request: ClusterRequest, outcome: HttpOutcome): HttpOutcome;
  private report(request: ClusterRequest, outcome: 'stream-open'): void;
  private report(request: ClusterRequest, outcome: HttpOutcome | 'stream-open'): HttpOutcome | void {
    for (const observer of this.observers) observer(request, outcome);
    return outcome === 'stream-open' ? undefined : outcome;
  }
}

function networkOutcome(error: unknown): HttpOutcome {
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'ENETWORK';
  return { kind: 'network', code, message: errorMessage(error) || code };
}
