// The one place that talks HTTP to the API server. Credentials, CA and proxies come from
// client-node's KubeConfig.applyToHTTPSOptions; this file only sends and receives bytes.
//
// Product code never changes a cluster: a request is either a read (GET) or a dry-run write, and a
// write *cannot* be expressed without `dryRun: 'All'` (the type demands it, and send() writes the
// query parameter itself, whatever the caller's query says).
//
// More jobs live here because every request passes through:
// - Retry-After: after a 429 or 503 that names a delay, nothing is sent to that server before it;
// - exec credential plugins run once per kubeconfig user, not once per request: their output is kept
//   until its expirationTimestamp or until the server answers 401 (client-go does the same; client-node
//   runs the plugin again for every request when the credential names no expiry);
// - every failure is an outcome, never an exception: a client certificate, key or certificate
//   authority Node cannot load is found before the request (Node would throw it from inside
//   `http.request`, or from a proxy agent's event handler), and whatever else `http.request` throws
//   is caught where it is called;
// - an answer about Secrets loses the values that kubectl's last-applied annotation copies before
//   anyone parses it (redact.ts), whatever asked for it.
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { User } from '@kubernetes/client-node/dist/config_types.js';
import { errorMessage } from './kubeconfig';
import {
  CLIENT_CREDENTIAL,
  CLIENT_SETUP,
  firstLine,
  parseRetryAfter,
  type HttpOutcome,
  type RequestPurpose,
} from './problems';
import { isSecretPath, redactText, rememberSecrets, withoutLastAppliedValues, withoutUserinfo } from './redact';

export interface ReadRequest {
  method: 'GET';
  path: string;
  query?: Record<string, string>;
  accept?: string;
  /** An ETag the caller keeps the answer of: a server that still has it answers 304 and no body. */
  ifNoneMatch?: string;
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
  /**
   * The TLS contexts of the process's other connections, by their material (share.ts): a
   * certificate authority, certificate and key are parsed once, whichever context uses them.
   */
  secureContexts?: Map<string, tls.SecureContext | undefined>;
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
  /** Requests sent and not yet answered (watches are not counted: they stay open). */
  private inFlight = 0;
  private readonly quietListeners = new Set<() => void>();
  private readonly observers: OutcomeObserver[] = [];
  private readonly agents = new Map<string, http.Agent>();
  /**
   * How each keep-alive agent's server is spoken to (ALPN, asked once per agent): one HTTP/2
   * connection that carries every request, or HTTP/1.1 through the agent. Pending while the first
   * connection is being made; forgotten when it fails or closes.
   */
  private readonly routes = new Map<https.Agent, Promise<Route | { failure: HttpOutcome }>>();
  /** A connection that answered the ALPN question with HTTP/1.1, waiting for its agent to take it. */
  private readonly spares = new Map<https.Agent, tls.TLSSocket>();
  /** The HTTP/2 connection of each agent whose server speaks it, once made. */
  private readonly openSessions = new WeakMap<https.Agent, http2.ClientHttp2Session>();
  /** The keep-alive agents this transport made (reusableAgent), as opposed to a proxy's. */
  private readonly ownAgents = new WeakSet<https.Agent>();
  private disposed = false;
  private readonly pauses = new Set<() => void>();
  private staticConfig: KubeConfig | undefined;
  /** TLS material already checked (unusableMaterial), by materialKey. */
  private readonly checkedMaterial = new Map<string, HttpOutcome | undefined>();
  /** The TLS context of each material (secureContextOf), by materialKey; shared when the options give one. */
  private readonly secureContexts: Map<string, tls.SecureContext | undefined>;

  /** The server as messages name it: without the userinfo its URL may carry. */
  private readonly shownServer: string;

  constructor(
    private readonly config: KubeConfig,
    private readonly server: string,
    private readonly options: TransportOptions,
  ) {
    this.shownServer = withoutUserinfo(server);
    this.secureContexts = options.secureContexts ?? new Map();
  }

  observe(observer: OutcomeObserver): void {
    this.observers.push(observer);
  }

  /** Whether a request (not a watch) is waiting for its answer. */
  busy(): boolean {
    return this.inFlight > 0;
  }

  /** Called each time the last request waiting for an answer has it (after the answer's own handlers). */
  onQuiet(listener: () => void): { dispose(): void } {
    this.quietListeners.add(listener);
    return { dispose: () => this.quietListeners.delete(listener) };
  }

  async send(request: ClusterRequest): Promise<HttpOutcome> {
    this.inFlight++;
    try {
      let outcome = await this.sendOnce(request);
      if (outcome.kind === 'response' && outcome.status === 401 && outcome.credential) {
        // The kept exec credential was refused (revoked, rotated, expired early): run the plugin again.
        this.forgetCredential(outcome.credential);
        outcome = await this.sendOnce(request);
      }
      const { credential: _credential, ...plain } = outcome as HttpOutcome & { credential?: string };
      return this.report(request, plain);
    } finally {
      this.inFlight--;
      // The caller's code runs first (it resolves with the answer now, in this tick's microtasks):
      // whatever it learns, or sends next, is done by the time the listeners ask.
      if (this.inFlight === 0 && this.quietListeners.size > 0)
        setImmediate(() => this.inFlight === 0 && this.quietListeners.forEach((l) => l()));
    }
  }

  private async sendOnce(request: ClusterRequest): Promise<HttpOutcome & { credential?: string }> {
    const prepared = await this.prepare(request);
    if ('failure' in prepared) return prepared.failure;
    const route = await this.routeOf(prepared);
    if ('failure' in route) return route.failure;
    if (route.kind === 'h2') return this.sendH2(route, prepared, request);
    return new Promise((resolve) => {
      const req = this.request(prepared, resolve, (res, sent) => {
        // Answered: from now on only a body that stops flowing is abandoned.
        sent.setTimeout(this.options.requestTimeoutMs, () => {
          sent.destroy(this.silence('body'));
        });
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            ...this.response(
              res.statusCode ?? 0,
              res.headers,
              received(request, Buffer.concat(chunks).toString('utf8')),
            ),
            ...(prepared.credential ? { credential: prepared.credential } : {}),
          }),
        );
        res.on('error', (error) => resolve(networkOutcome(error)));
      });
      if (!req) return;
      this.answerWithin(req);
      req.on('error', (error) => resolve(networkOutcome(error)));
      req.end(request.method === 'GET' ? undefined : request.body);
    });
  }

  /**
   * What a request is abandoned with when the server is silent for the request timeout: no answer
   * at all (a black-holed address, a server that accepted and says nothing), or an answer whose
   * body stopped flowing.
   */
  private silence(what: 'answer' | 'body'): Error {
    const seconds = Math.round(this.options.requestTimeoutMs / 1000);
    const message =
      what === 'answer'
        ? `no answer from ${this.shownServer} within ${seconds} s`
        : `${this.shownServer} stopped sending its answer for ${seconds} s`;
    return Object.assign(new Error(message), { code: 'ETIMEDOUT' });
  }

  /**
   * The request made, or undefined when Node refuses to make it (it throws from inside
   * `http.request`: TLS material it cannot load, an option it rejects); then `failed` has the
   * outcome. Nothing thrown while a request is made escapes the transport.
   */
  private request(
    prepared: PreparedRequest,
    failed: (outcome: HttpOutcome) => void,
    onResponse: (res: http.IncomingMessage, req: http.ClientRequest) => void,
  ): http.ClientRequest | undefined {
    try {
      const req: http.ClientRequest = prepared.module.request(prepared.url, prepared.options, (res) =>
        onResponse(res, req),
      );
      return req;
    } catch (error) {
      failed({
        kind: 'network',
        code: CLIENT_SETUP,
        message: redactText(`Cannot send a request to ${this.shownServer}: ${errorMessage(error)}`),
      });
      return undefined;
    }
  }

  /** A response as an outcome; a Retry-After in it holds back every later request to this server. */
  private response(status: number, headers: http.IncomingHttpHeaders, body: string): HttpOutcome {
    const header = headers['retry-after'];
    const retryAfterMs =
      status === 429 || status >= 500 ? parseRetryAfter(Array.isArray(header) ? header[0] : header) : undefined;
    if (retryAfterMs !== undefined)
      holds.set(this.server, Math.max(holds.get(this.server) ?? 0, Date.now() + retryAfterMs));
    // Kept only where a later request can name it (discovery, api-cache.ts).
    const etag = typeof headers.etag === 'string' && status < 400 ? headers.etag : undefined;
    return {
      kind: 'response',
      status,
      body,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(etag !== undefined ? { etag } : {}),
    };
  }

  /**
   * How this request's server is spoken to. A direct HTTPS server is asked once, on the first
   * connection (ALPN, offering h2 and http/1.1, as kubectl's Go transport does): a server that
   * speaks HTTP/2 gets every later request on that one connection, multiplexed, instead of a
   * connection and a TLS handshake for each request in flight; one that does not keeps the agent,
   * which takes over the connection already made. Plain HTTP and proxies keep the agent.
   */
  private routeOf(prepared: PreparedRequest): Route | Promise<Route | { failure: HttpOutcome }> {
    const agent = prepared.options.agent;
    if (prepared.module !== https || !(agent instanceof https.Agent) || !this.ownAgents.has(agent)) return HTTP1;
    let route = this.routes.get(agent);
    // A connection that has closed (the server went away, or said GOAWAY) is replaced, not asked.
    const open = route && this.openSessions.get(agent);
    if (open && (open.closed || open.destroyed)) {
      this.openSessions.delete(agent);
      route = undefined;
    }
    if (!route) {
      route = this.connectRoute(agent, prepared.url, prepared.options);
      this.routes.set(agent, route);
      const made = route;
      void made.then((r) => {
        // A failure is not kept: the next request tries again.
        if ('failure' in r && this.routes.get(agent) === made) this.routes.delete(agent);
      });
    }
    return route;
  }

  private connectRoute(
    agent: https.Agent,
    url: URL,
    options: https.RequestOptions,
  ): Promise<Route | { failure: HttpOutcome }> {
    return new Promise((resolve) => {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      // As the agent would name the server: SNI for a host name (or the kubeconfig's tls-server-name), none for an address.
      const servername = options.servername ?? (net.isIP(host) ? undefined : host);
      let socket: tls.TLSSocket;
      try {
        socket = tls.connect({
          ...(agent as https.Agent & { options: tls.ConnectionOptions }).options,
          host,
          port: Number(url.port) || 443,
          ...(servername ? { servername } : {}),
          ALPNProtocols: ['h2', 'http/1.1'],
        });
      } catch (error) {
        resolve({
          failure: {
            kind: 'network',
            code: CLIENT_SETUP,
            message: redactText(`Cannot send a request to ${this.shownServer}: ${errorMessage(error)}`),
          },
        });
        return;
      }
      // Until the handshake is done the usual request timeout applies (a black-holed address).
      const timer = setTimeout(() => {
        socket.destroy(this.silence('answer'));
      }, this.options.requestTimeoutMs);
      timer.unref?.();
      const failed = (error: Error) => {
        clearTimeout(timer);
        resolve({ failure: networkOutcome(error) });
      };
      socket.once('error', failed);
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        socket.off('error', failed);
        if (this.disposed) {
          socket.destroy();
          resolve({ failure: { kind: 'network', code: 'ECANCELED', message: 'the connection was closed' } });
        } else if (socket.alpnProtocol === 'h2') resolve(this.http2Route(agent, url, socket));
        else {
          // HTTP/1.1: the agent's next connection is this one (reusableAgent).
          socket.on('error', () => socket.destroy());
          this.spares.get(agent)?.destroy();
          this.spares.set(agent, socket);
          resolve(HTTP1);
        }
      });
    });
  }

  private http2Route(agent: https.Agent, url: URL, socket: tls.TLSSocket): Http2Route {
    const session = http2.connect(url.origin, {
      createConnection: () => socket,
      // Go's HTTP/2 transport gives a stream 4 MiB of flow control, not the protocol's 64 KiB: a
      // large answer (a big LIST, an OpenAPI document) a region away would otherwise wait a round
      // trip for every 64 KiB.
      settings: { initialWindowSize: STREAM_WINDOW },
    });
    const route: Http2Route = { kind: 'h2', session, active: 0 };
    this.openSessions.set(agent, session);
    session.once('connect', () => session.setLocalWindowSize(CONNECTION_WINDOW));
    // A stream's own error reaches its request; the session's alone means the connection is gone.
    session.on('error', () => {});
    // Closed (the server went away, or said GOAWAY: Node then closes the session), it is replaced by
    // the next request (routeOf).
    // Idle, the connection does not keep the process alive (as the agent's idle sockets do not).
    session.unref();
    return route;
  }

  private sendH2(
    route: Http2Route,
    prepared: PreparedRequest,
    request: ClusterRequest,
  ): Promise<HttpOutcome & { credential?: string }> {
    return new Promise((resolve) => {
      const { url, options } = prepared;
      const headers: http2.OutgoingHttpHeaders = {
        [http2.constants.HTTP2_HEADER_METHOD]: request.method,
        [http2.constants.HTTP2_HEADER_PATH]: url.pathname + url.search,
      };
      for (const [key, value] of Object.entries(options.headers as Record<string, string>))
        headers[key.toLowerCase()] = value;
      // What Node's HTTP/1.1 request does with a kubeconfig's username and password.
      if (options.auth && headers.authorization === undefined)
        headers.authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
      let stream: http2.ClientHttp2Stream;
      try {
        stream = route.session.request(headers, { endStream: request.method === 'GET' });
      } catch (error) {
        // The connection closed between the route and the request: the next request makes another.
        void this.routes.get(options.agent as https.Agent)?.then((r) => {
          if (r === route) this.routes.delete(options.agent as https.Agent);
        });
        resolve(networkOutcome(error));
        return;
      }
      if (route.active++ === 0) route.session.ref();
      const finish = (outcome: HttpOutcome & { credential?: string }) => {
        clearTimeout(timer);
        resolve(outcome);
      };
      const timer = setTimeout(() => {
        stream.destroy(this.silence('answer'));
      }, this.options.requestTimeoutMs);
      timer.unref?.();
      stream.once('response', (answer) => {
        clearTimeout(timer);
        // Answered: from now on only a body that stops flowing is abandoned.
        stream.setTimeout(this.options.requestTimeoutMs, () => {
          stream.destroy(this.silence('body'));
        });
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.once('end', () =>
          finish({
            ...this.response(
              Number(answer[http2.constants.HTTP2_HEADER_STATUS] ?? 0),
              answer,
              received(request, Buffer.concat(chunks).toString('utf8')),
            ),
            ...(prepared.credential ? { credential: prepared.credential } : {}),
          }),
        );
      });
      stream.once('error', (error) => finish(networkOutcome(error)));
      stream.once('close', () => {
        if (--route.active === 0) route.session.unref();
        // Reset without an error of its own (the connection went away): still an outcome.
        finish({
          kind: 'network',
          code: 'ECONNRESET',
          message: `${this.shownServer} closed the connection (HTTP/2 stream reset, code ${stream.rstCode ?? 0})`,
        });
      });
      if (request.method !== 'GET') stream.end(request.body);
    });
  }

  /**
   * Abandon a request the server does not answer within the timeout: a black-holed address (the
   * connection never completes), or a server that accepted the connection and says nothing. The
   * clock runs from the moment the request is made, not from when a socket is assigned: a keep-alive
   * agent may queue it, and an idle timer on the socket would restart with every byte.
   */
  private answerWithin(req: http.ClientRequest): void {
    const timer = setTimeout(() => {
      req.destroy(this.silence('answer'));
    }, this.options.requestTimeoutMs);
    timer.unref?.();
    req.once('response', () => clearTimeout(timer));
    req.once('close', () => clearTimeout(timer));
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
      const prepared = await this.prepare(request, () => aborted);
      if ('failure' in prepared) return aborted ? 'ended' : this.report(request, prepared.failure);
      if (aborted) return 'ended';
      return new Promise<HttpOutcome | 'ended'>((resolve) => {
        const req = this.request(
          prepared,
          (failure) => resolve(this.report(request, failure)),
          (res, sent) => {
            sent.setTimeout(0); // a keep-alive socket may carry an idle timeout from an earlier request
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              if (status === 401 && prepared.credential) this.forgetCredential(prepared.credential);
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () =>
                resolve(
                  this.report(
                    request,
                    this.response(
                      res.statusCode ?? 0,
                      res.headers,
                      received(request, Buffer.concat(chunks).toString('utf8')),
                    ),
                  ),
                ),
              );
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
                if (line && !aborted) onLine(received(request, line));
                newline = pending.indexOf('\n');
              }
            });
            // Once open, a watch that drops says nothing about the server's health (load balancers
            // close idle connections); the reconnect that follows is what reports.
            res.on('end', () => resolve('ended'));
            res.on('error', (error) => resolve(aborted ? 'ended' : networkOutcome(error)));
            res.on('close', () =>
              resolve(
                aborted || res.complete
                  ? 'ended'
                  : { kind: 'network', code: 'ECONNRESET', message: 'watch connection closed' },
              ),
            );
          },
        );
        if (!req) return;
        // Until the server answers, the usual request timeout applies (a black-holed address); once
        // it has answered, silence is normal.
        this.answerWithin(req);
        // A watch is legitimately silent for minutes; TCP keep-alive finds a dead peer instead.
        req.on('socket', (socket) => socket.setKeepAlive(true, 15_000));
        req.on('error', (error) =>
          resolve(aborted ? 'ended' : opened ? networkOutcome(error) : this.report(request, networkOutcome(error))),
        );
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

  private async prepare(
    request: ClusterRequest,
    cancelled: () => boolean = () => false,
  ): Promise<PreparedRequest | { failure: HttpOutcome }> {
    // Retry-After: wait it out rather than send (client-go's behaviour); several requests may wait.
    while (Date.now() < this.holdUntil() && !this.disposed && !cancelled())
      await this.pause(this.holdUntil() - Date.now());
    if (this.disposed) return { failure: { kind: 'network', code: 'ECANCELED', message: 'the connection was closed' } };
    this.requestsSent++;
    const target = this.server.replace(/\/+$/, '') + request.path;
    // The kubeconfig's server was checked when the context was selected; this is the last guard.
    if (!URL.canParse(target))
      return {
        failure: { kind: 'network', code: CLIENT_SETUP, message: `The server ${this.shownServer} is not a URL.` },
      };
    const url = new URL(target);
    for (const [key, value] of Object.entries(request.query ?? {})) url.searchParams.set(key, value);
    if (request.method !== 'GET') url.searchParams.set('dryRun', 'All');
    const authenticated = await this.authenticate();
    if ('failure' in authenticated) return authenticated;
    const { options, credential } = authenticated;
    if (url.protocol === 'https:') {
      const unusable = this.unusableMaterial(options);
      if (unusable) return { failure: unusable };
    }
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    rememberSecrets(headers.Authorization, options.auth, options.key as string | Buffer | undefined);
    headers['User-Agent'] = this.options.userAgent;
    if (request.method === 'GET') {
      headers.Accept = request.accept ?? 'application/json';
      if (request.ifNoneMatch) headers['If-None-Match'] = request.ifNoneMatch;
    } else {
      headers.Accept = request.accept ?? 'application/json';
      headers['Content-Type'] = request.contentType;
      headers['Content-Length'] = String(Buffer.byteLength(request.body));
    }
    return {
      module: url.protocol === 'http:' ? http : https,
      url,
      options: { ...options, method: request.method, headers },
      ...(credential ? { credential } : {}),
    };
  }

  /**
   * Why the TLS material of a request (the kubeconfig's or an exec plugin's certificate authority,
   * client certificate and key) cannot be used, asked once per material. Node would throw it from
   * inside the request, or, behind an HTTPS proxy, from the proxy's event handler, where no caller
   * can catch it.
   */
  private unusableMaterial(options: https.RequestOptions): HttpOutcome | undefined {
    const material = pick(options);
    const key = materialKey(material, true);
    if (!this.checkedMaterial.has(key))
      this.checkedMaterial.set(key, this.secureContextOf(material) ? undefined : tlsMaterialProblem(material));
    return this.checkedMaterial.get(key);
  }

  /**
   * The TLS context of this material, made once and shared by every connection that uses it: Node
   * would otherwise parse the certificate authority, certificate and key again for each connection
   * (the first requests of a process open several at once). Undefined when it cannot be made.
   */
  private secureContextOf(material: https.AgentOptions): tls.SecureContext | undefined {
    const key = materialKey(material, true);
    if (!this.secureContexts.has(key)) {
      let context: tls.SecureContext | undefined;
      try {
        const { ca, cert, key: privateKey, pfx, passphrase } = material;
        context = tls.createSecureContext({ ca, cert, key: privateKey, pfx, passphrase });
      } catch {
        context = undefined; // unusableMaterial says why, before any request is sent
      }
      this.secureContexts.set(key, context);
    }
    return this.secureContexts.get(key);
  }

  /** The request options of the kubeconfig: TLS material, proxy agent, credentials. */
  private async authenticate(): Promise<
    { options: https.RequestOptions; credential?: string } | { failure: HttpOutcome }
  > {
    const user = this.config.getCurrentUser();
    const exec = user ? execConfig(user) : undefined;
    const options: https.RequestOptions = {};
    try {
      if (!user || !exec) {
        await this.config.applyToHTTPSOptions(options);
        options.agent = this.reusableAgent(options);
        return { options };
      }
      const key = JSON.stringify([user.name, exec]);
      const credential = await this.execCredential(key, user);
      if ('failure' in credential) return credential;
      // Everything but the plugin's output comes from the kubeconfig as usual (a static token, if
      // the user entry also has one, wins, as in client-node and kubectl).
      await this.withoutExec().applyToHTTPSOptions(options);
      const headers = (options.headers ?? {}) as http.OutgoingHttpHeaders;
      if (credential.authorization && !headers.Authorization) headers.Authorization = credential.authorization;
      options.headers = headers;
      if (credential.cert) options.cert = credential.cert;
      if (credential.key) options.key = credential.key;
      options.agent = this.reusableAgent(options);
      return { options, credential: key };
    } catch (error) {
      // The library throws when a certificate file is missing or unreadable.
      return {
        failure: {
          kind: 'network',
          code: 'EXEC_CREDENTIAL',
          message: redactText(`Cannot get credentials: ${errorMessage(error)}`),
        },
      };
    }
  }

  /** The kept credential of this user, or one run of its plugin shared by every request waiting for it. */
  private async execCredential(key: string, user: User): Promise<ExecCredential | { failure: HttpOutcome }> {
    const kept = execCredentials.get(key);
    if (kept) {
      const value = await kept;
      if (!('failure' in value) && (value.expiresAt === undefined || value.expiresAt > Date.now())) return value;
      if (execCredentials.get(key) === kept) execCredentials.delete(key);
      if ('failure' in value) return value;
    }
    let running = execCredentials.get(key);
    if (!running) {
      running = this.runExec(user);
      execCredentials.set(key, running);
      void running.then((value) => {
        // A failure is not kept: the next request tries the plugin again.
        if ('failure' in value && execCredentials.get(key) === running) execCredentials.delete(key);
      });
    }
    return running;
  }

  private async runExec(user: User): Promise<ExecCredential | { failure: HttpOutcome }> {
    const full: https.RequestOptions = {};
    const base: https.RequestOptions = {};
    try {
      await this.config.applyToHTTPSOptions(full);
      await this.withoutExec().applyToHTTPSOptions(base);
    } catch (error) {
      return {
        failure: { kind: 'network', code: 'EXEC_CREDENTIAL', message: execFailureMessage(error, execConfig(user)) },
      };
    } finally {
      for (const agent of [full.agent, base.agent]) if (agent && typeof agent === 'object') agent.destroy();
    }
    const authorization = (full.headers as http.OutgoingHttpHeaders | undefined)?.Authorization;
    const credential: ExecCredential = {
      ...(typeof authorization === 'string' &&
      authorization !== (base.headers as http.OutgoingHttpHeaders | undefined)?.Authorization
        ? { authorization }
        : {}),
      ...(full.cert && !sameMaterial(full.cert, base.cert) ? { cert: full.cert } : {}),
      ...(full.key && !sameMaterial(full.key, base.key) ? { key: full.key } : {}),
      ...expiryOf(this.config, user.name),
    };
    rememberSecrets(credential.authorization, credential.key as string | Buffer | undefined);
    return credential;
  }

  private forgetCredential(key: string): void {
    execCredentials.delete(key);
    const user = this.config.getCurrentUser();
    // client-node keeps a credential that names an expiry until then; the server just said it is no good.
    if (user) forgetLibraryCredential(this.config, user.name);
  }

  /** The same kubeconfig with the current user's exec plugin removed: TLS and static credentials only. */
  private withoutExec(): KubeConfig {
    if (!this.staticConfig) {
      const current = this.config.getCurrentUser();
      const twin = new KubeConfig();
      twin.loadFromOptions({
        clusters: this.config.getClusters(),
        users: this.config.getUsers().map((u) => (u.name === current?.name ? stripExec(u) : u)),
        contexts: this.config.getContexts(),
        currentContext: this.config.getCurrentContext(),
      });
      this.staticConfig = twin;
    }
    return this.staticConfig;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(1, ms));
      timer.unref?.();
      this.pauses.add(done);
      const pauses = this.pauses;
      function done(): void {
        clearTimeout(timer);
        pauses.delete(done);
        resolve();
      }
    });
  }

  /** When the server allows the next request (its Retry-After), as Date.now() time. */
  private holdUntil(): number {
    return holds.get(this.server) ?? 0;
  }

  /**
   * client-node builds a new agent for every request, so each request would pay a TCP and TLS
   * handshake (tens of milliseconds). A keep-alive agent with the same TLS material is reused instead;
   * new material (a rotated exec client certificate) gets a new agent. Proxy agents are left alone.
   */
  private reusableAgent(options: https.RequestOptions): https.RequestOptions['agent'] {
    const fresh = options.agent;
    if (!fresh || (fresh.constructor !== https.Agent && fresh.constructor !== http.Agent)) return fresh;
    // The TLS material of the request (an exec plugin's client certificate is only here, not in the
    // agent client-node built without it).
    const tls = { ...(fresh as https.Agent & { options: https.AgentOptions }).options, ...pick(options) };
    const key = materialKey(tls, fresh.constructor === https.Agent);
    let agent = this.agents.get(key);
    if (!agent) {
      if (fresh.constructor === https.Agent) {
        const secureContext = this.secureContextOf(tls);
        const secure = new https.Agent({ ...tls, keepAlive: true, ...(secureContext ? { secureContext } : {}) });
        // The connection that asked for HTTP/2 and was answered HTTP/1.1 (routeOf) is this agent's next one.
        const own = secure as https.Agent & { createConnection: (...args: unknown[]) => net.Socket | undefined };
        const create = own.createConnection.bind(own);
        own.createConnection = (...args) => {
          const spare = this.spares.get(secure);
          this.spares.delete(secure);
          return spare && !spare.destroyed ? spare : create(...args);
        };
        this.ownAgents.add(secure);
        agent = secure;
      } else agent = new http.Agent({ ...tls, keepAlive: true });
      this.agents.set(key, agent);
    }
    fresh.destroy();
    return agent;
  }

  /** Close idle keep-alive connections. */
  dispose(): void {
    this.disposed = true;
    for (const wake of [...this.pauses]) wake();
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
    for (const socket of this.spares.values()) socket.destroy();
    this.spares.clear();
    for (const route of this.routes.values()) void route.then((r) => 'session' in r && r.session.destroy());
    this.routes.clear();
  }

  private report(request: ClusterRequest, outcome: HttpOutcome): HttpOutcome;
  private report(request: ClusterRequest, outcome: 'stream-open'): void;
  private report(request: ClusterRequest, outcome: HttpOutcome | 'stream-open'): HttpOutcome | void {
    for (const observer of this.observers) observer(request, outcome);
    return outcome === 'stream-open' ? undefined : outcome;
  }
}

/**
 * An answer's text as callers get it: about Secrets, without the values that the last-applied
 * annotation copies (no request can leave the annotation out of a metadata-only read).
 */
function received(request: ClusterRequest, text: string): string {
  return isSecretPath(request.path) ? withoutLastAppliedValues(text) : text;
}

/** How a server is spoken to: HTTP/1.1 through the keep-alive agent, or one HTTP/2 connection. */
type Route = { kind: 'h1' } | Http2Route;
interface Http2Route {
  kind: 'h2';
  session: http2.ClientHttp2Session;
  /** Streams open on it: while there are any, the connection keeps the process alive. */
  active: number;
}
const HTTP1: Route = { kind: 'h1' };
/** HTTP/2 flow control windows, as Go's HTTP/2 transport sets them (golang.org/x/net/http2 transport.go). */
const STREAM_WINDOW = 4 << 20;
const CONNECTION_WINDOW = 1 << 30;

interface PreparedRequest {
  module: typeof https | typeof http;
  url: URL;
  options: https.RequestOptions;
  credential?: string;
}

function networkOutcome(error: unknown): HttpOutcome {
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'ENETWORK';
  return { kind: 'network', code, message: errorMessage(error) || code };
}

const TLS_FIELDS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

function materialKey(tls: https.AgentOptions, secure: boolean): string {
  return JSON.stringify([
    secure,
    ...TLS_FIELDS.map((k) => {
      const value: unknown = tls[k];
      return Buffer.isBuffer(value) ? value.toString('base64') : value;
    }),
  ]);
}

/**
 * Why Node cannot make a TLS context of this material, naming the part at fault (each part is
 * tried alone only once the whole has failed), else undefined. A client certificate or key that
 * cannot be used is an authentication problem; anything else (a certificate authority) keeps the
 * server from being reached.
 */
function tlsMaterialProblem(material: https.AgentOptions): HttpOutcome | undefined {
  const failure = (options: tls.SecureContextOptions): unknown => {
    try {
      tls.createSecureContext(options);
      return undefined;
    } catch (error) {
      return error ?? new Error('unknown error');
    }
  };
  const whole = failure(material);
  if (whole === undefined) return undefined;
  const { ca, cert, key, pfx, passphrase } = material;
  const parts: [string, string, tls.SecureContextOptions | undefined][] = [
    ['certificate authority', CLIENT_SETUP, ca !== undefined ? { ca } : undefined],
    ['client certificate', CLIENT_CREDENTIAL, cert !== undefined ? { cert } : undefined],
    [
      'client key',
      CLIENT_CREDENTIAL,
      key !== undefined ? { key, ...(passphrase !== undefined ? { passphrase } : {}) } : undefined,
    ],
    [
      'client certificate and key',
      CLIENT_CREDENTIAL,
      cert !== undefined && key !== undefined
        ? { cert, key, ...(passphrase !== undefined ? { passphrase } : {}) }
        : undefined,
    ],
    [
      'client certificate bundle (pfx)',
      CLIENT_CREDENTIAL,
      pfx !== undefined ? { pfx, ...(passphrase !== undefined ? { passphrase } : {}) } : undefined,
    ],
  ];
  // OpenSSL's words without their number: `x509 certificate routines::key values mismatch`.
  const reason = (error: unknown) => errorMessage(error).replace(/^error:[0-9A-Fa-f]+:/, '');
  for (const [what, code, options] of parts) {
    const error = options && failure(options);
    if (error !== undefined)
      return { kind: 'network', code, message: redactText(`The ${what} cannot be used: ${reason(error)}.`) };
  }
  return {
    kind: 'network',
    code: CLIENT_SETUP,
    message: redactText(`The TLS settings cannot be used: ${reason(whole)}.`),
  };
}

function sameMaterial(a: unknown, b: unknown): boolean {
  return Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : a === b;
}

function pick(options: https.RequestOptions): https.AgentOptions {
  const out: Record<string, unknown> = {};
  for (const k of TLS_FIELDS) if (options[k] !== undefined) out[k] = options[k];
  return out as https.AgentOptions;
}

/** What an exec credential plugin gave, as request material. */
interface ExecCredential {
  authorization?: string;
  cert?: https.RequestOptions['cert'];
  key?: https.RequestOptions['key'];
  /** From the ExecCredential's status.expirationTimestamp; none means "until the server refuses it". */
  expiresAt?: number;
}

/**
 * Retry-After by server URL: a server that asked to be left alone is left alone by every connection
 * of the process (several contexts may name the same cluster).
 */
const holds = new Map<string, number>();

/** Kept exec credentials by kubeconfig user (its name and plugin), shared by every connection of the process. */
const execCredentials = new Map<string, Promise<ExecCredential | { failure: HttpOutcome }>>();

/** The exec plugin of a kubeconfig user, as client-node's ExecAuth finds it. */
function execConfig(user: User): { command?: unknown; args?: unknown; env?: unknown } | undefined {
  const exec: unknown = user.exec ?? (user.authProvider as { config?: { exec?: unknown } } | undefined)?.config?.exec;
  return exec && typeof exec === 'object' ? (exec as { command?: unknown }) : undefined;
}

function stripExec(user: User): User {
  const { exec: _exec, authProvider, ...rest } = user;
  const execProvider = authProvider as { name?: string; config?: { exec?: unknown } } | undefined;
  return execProvider && execProvider.name !== 'exec' && !execProvider.config?.exec ? { ...rest, authProvider } : rest;
}

/**
 * client-node keeps the ExecCredential it parsed (private to its ExecAuth); its expiry is the only
 * part that is not in the request options. Read defensively: a library that keeps it elsewhere means
 * "no expiry known", and the 401 rule still renews the credential.
 */
function libraryCredentialCache(config: KubeConfig): Record<string, unknown>[] {
  const authenticators = (config as unknown as { authenticators?: unknown }).authenticators;
  if (!Array.isArray(authenticators)) return [];
  return authenticators.flatMap((a: unknown) => {
    const cache = (a as { tokenCache?: unknown } | null)?.tokenCache;
    return cache && typeof cache === 'object' ? [cache as Record<string, unknown>] : [];
  });
}

function expiryOf(config: KubeConfig, userName: string): { expiresAt?: number } {
  for (const cache of libraryCredentialCache(config)) {
    const stamp = (cache[userName] as { status?: { expirationTimestamp?: unknown } } | null | undefined)?.status
      ?.expirationTimestamp;
    const at = typeof stamp === 'string' ? Date.parse(stamp) : Number.NaN;
    if (!Number.isNaN(at)) return { expiresAt: at };
  }
  return {};
}

function forgetLibraryCredential(config: KubeConfig, userName: string): void {
  for (const cache of libraryCredentialCache(config)) if (userName in cache) cache[userName] = null;
}

/**
 * Why a credential plugin gave no credential, without what it printed: its stdout is the credential
 * (a JSON parse error quotes its first bytes), and its stderr often repeats it
 * (`refresh failed for token=...`). The first line of stderr is kept, redacted: it is usually the
 * advice the user needs ("run gcloud auth login").
 */
export function execFailureMessage(error: unknown, exec: { command?: unknown } | undefined): string {
  const command = typeof exec?.command === 'string' ? path.basename(exec.command) : 'the exec credential plugin';
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof SyntaxError)
    return `Cannot get credentials: ${command} did not print an ExecCredential (its output is not JSON).`;
  if (typeof code === 'string') return `Cannot get credentials: cannot run ${command} (${code}).`;
  const detail = redactText(firstLine(errorMessage(error)));
  return `Cannot get credentials: ${command} failed${detail ? `: ${detail}` : ' without saying why'}.`;
}
