// A real admission webhook server for the tests: HTTPS on loopback with a CA of its own (made by
// openssl in a temporary folder), answering AdmissionReview v1 and recording every call. The path
// a configuration points at says who is called and how to answer: `/<run>/<webhook name>` allows,
// `/<run>/<webhook name>/deny/<message, URL-encoded>` denies with that message (403): the API
// server permits no query in a webhook's URL. What the API server sends is kept
// per run, so scenarios side by side read only their own calls.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export interface WebhookCall {
  readonly run: string;
  readonly webhook: string;
  readonly operation: string;
  readonly dryRun: boolean;
  readonly kind: string;
  readonly name: string;
}

export interface WebhookServer {
  /** The PEM of the CA that signed the server's certificate: a configuration's caBundle (base64 of it). */
  readonly caBundle: string;
  /** `https://127.0.0.1:PORT` */
  readonly base: string;
  callsOf(run: string): WebhookCall[];
  close(): Promise<void>;
}

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.error?.message ?? r.stderr}`);
}

export async function startWebhookServer(): Promise<WebhookServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-webhook-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(dir, [
    'req',
    '-x509',
    ...ec,
    '-days',
    '2',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-subj',
    '/CN=kch webhook test CA',
  ]);
  openssl(dir, ['req', ...ec, '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', '/CN=127.0.0.1']);
  fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'tls.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
    '-out',
    'tls.crt',
  ]);
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  const calls: WebhookCall[] = [];
  const server = https.createServer({ key: read('tls.key'), cert: read('tls.crt') }, (req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      const [run = '', webhook = '', verdict, reason] = url.pathname.split('/').filter(Boolean);
      let review: {
        request?: {
          uid?: string;
          operation?: string;
          dryRun?: boolean;
          kind?: { kind?: string };
          name?: string;
          object?: { metadata?: { name?: string } };
        };
      } = {};
      try {
        review = JSON.parse(text) as typeof review;
      } catch {
        // answered as an empty review
      }
      const r = review.request ?? {};
      calls.push({
        run,
        webhook,
        operation: r.operation ?? '',
        dryRun: r.dryRun === true,
        kind: r.kind?.kind ?? '',
        name: r.name ?? r.object?.metadata?.name ?? '',
      });
      const deny = verdict === 'deny' ? decodeURIComponent(reason ?? '') : null;
      const response = {
        uid: r.uid ?? '',
        allowed: deny === null,
        ...(deny !== null ? { status: { code: 403, message: deny } } : {}),
      };
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    caBundle: read('ca.crt'),
    base: `https://127.0.0.1:${port}`,
    callsOf: (run) => calls.filter((c) => c.run === run),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        fs.rmSync(dir, { recursive: true, force: true });
      }),
  };
}
