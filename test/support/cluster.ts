// The real Kubernetes API server the tests, the demo and the benchmarks run against: kube-apiserver and
// etcd built from the Go module in test/apiserver, started detached on loopback ports with TLS from a
// generated CA, static tokens for the users admin / viewer / stranger, RBAC, and an audit log of every
// request. No controllers run: what they would write, test/support/seed.ts writes under their names.
import { spawn, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import { stringify as toYaml } from 'yaml';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const goModuleDir = path.join(repoRoot, 'test', 'apiserver');
// Absolute: the servers start with their cwd in the state directory, where a relative path would not
// name the binaries any more.
const binDir = path.resolve(process.env.KCH_APISERVER_BIN_DIR ?? path.join(repoRoot, '.cache', 'apiserver', 'bin'));
// KCH_CLUSTER_STATE_DIR is for the harness's own tests (test/harness/), which start a second cluster
// beside the one the run is using; scripts/test.mjs reads env.json from the default place.
const stateDir = path.resolve(process.env.KCH_CLUSTER_STATE_DIR ?? path.join(repoRoot, '.cache', 'cluster'));
const pkiDir = path.join(stateDir, 'pki');
const logDir = path.join(stateDir, 'logs');

/** The release the Go module pins (test/apiserver/go.mod); reported by the server's /version. */
export const kubernetesVersion = 'v1.34.4';

export const users = ['admin', 'viewer', 'stranger'] as const;
export type TestUser = (typeof users)[number];

/** What `up` leaves in .cache/cluster/env.json (scripts/test.mjs turns it into KCH_* variables). */
export interface ClusterEnv {
  kubeconfig: string;
  auditLog: string;
  server: string;
}

interface RunningState {
  server: string;
  etcdUrl: string;
  pids: { etcd: number; apiserver: number };
  /**
   * The binaries the processes were started from. `down` recognises its processes by them, whatever
   * KCH_APISERVER_BIN_DIR says when it runs (absent in state files written before it was recorded).
   */
  binaries?: { etcd: string; apiserver: string };
}

/** A failure the command line reports as one line, without a stack trace. */
export class ClusterError extends Error {}

const files = {
  env: path.join(stateDir, 'env.json'),
  state: path.join(stateDir, 'state.json'),
  kubeconfig: path.join(stateDir, 'kubeconfig'),
  tokens: path.join(stateDir, 'tokens.csv'),
  auditPolicy: path.join(stateDir, 'audit-policy.yaml'),
  auditLog: path.join(logDir, 'audit.log'),
  etcdData: path.join(stateDir, 'etcd-data'),
  buildStamp: path.join(binDir, 'build.stamp'),
  // Beside the binaries, so a build into another directory (KCH_APISERVER_BIN_DIR) keeps its own log.
  buildLog: path.join(path.dirname(binDir), 'build.log'),
};
const binaries = { apiserver: path.join(binDir, 'kube-apiserver'), etcd: path.join(binDir, 'etcd') };

function log(message: string): void {
  process.stderr.write(`cluster: ${message}\n`);
}

// ---------------------------------------------------------------------------------------------------
// Building

/** -X flags that make /version report the release, as the upstream build (hack/lib/version.sh) does. */
function apiserverLdflags(): string {
  const [major, minor] = kubernetesVersion.slice(1).split('.');
  const stamp = (pkg: string) => [
    `-X ${pkg}.gitVersion=${kubernetesVersion}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
  ];
  return ['-s', '-w', ...stamp('k8s.io/component-base/version'), ...stamp('k8s.io/client-go/pkg/version')].join(' ');
}

/** Hash of everything that decides the binaries: the Go sources, go.mod/go.sum and the link flags. */
function sourceHash(): string {
  const hash = crypto.createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.go$|^go\.(mod|sum)$/.test(entry.name)) {
        hash.update(path.relative(goModuleDir, full)).update('\0').update(fs.readFileSync(full)).update('\0');
      }
    }
  };
  walk(goModuleDir);
  hash.update(apiserverLdflags());
  return hash.digest('hex');
}

export function binariesAreCurrent(): boolean {
  return (
    fs.existsSync(binaries.apiserver) &&
    fs.existsSync(binaries.etcd) &&
    fs.existsSync(files.buildStamp) &&
    fs.readFileSync(files.buildStamp, 'utf8').trim() === sourceHash()
  );
}

function runGo(args: string[], what: string): { ok: boolean; output: string } {
  const started = Date.now();
  const result = spawnSync('go', args, { cwd: goModuleDir, encoding: 'utf8', env: process.env, maxBuffer: 64 << 20 });
  if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new ClusterError(
      'Go is not installed (no `go` on PATH): the test API server is built from source with Go >= 1.24',
    );
  }
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  fs.appendFileSync(
    files.buildLog,
    `$ go ${args.join(' ')}   # ${what}, ${((Date.now() - started) / 1000).toFixed(1)} s\n${output}\n`,
  );
  return { ok: result.status === 0, output };
}

export const networkFailure =
  /dial tcp|no such host|connection refused|i\/o timeout|TLS handshake|proxy\.golang\.org|GOPROXY=off|module lookup disabled|unrecognized import path|Get "https?:/;

/** Builds kube-apiserver and etcd into .cache/apiserver/bin unless the stamp says they are current. */
export async function ensureBinaries(): Promise<void> {
  if (binariesAreCurrent()) return;
  // A lock of its own beside the binaries, so `cluster-cli build` and an `up` never build at once.
  await withLock(path.join(path.dirname(binDir), 'build.lock'), async () => {
    if (!binariesAreCurrent()) buildBinaries();
  });
}

function buildBinaries(): void {
  if (spawnSync('go', ['version']).error) {
    throw new ClusterError(
      'Go is not installed (no `go` on PATH): the test API server is built from source with Go >= 1.24',
    );
  }
  fs.mkdirSync(binDir, { recursive: true });
  fs.writeFileSync(files.buildLog, '');
  log(
    `building kube-apiserver ${kubernetesVersion} and etcd from test/apiserver (first time: many minutes; log: ${files.buildLog})`,
  );
  const started = Date.now();

  // Downloading first and on its own separates "no module proxy" from a compile error.
  const download = runGo(['mod', 'download'], 'fetch modules');
  if (!download.ok) {
    const firstError = download.output.split('\n').find((l) => l.trim()) ?? '';
    if (networkFailure.test(download.output)) {
      throw new ClusterError(
        `cannot download the Go modules for kube-apiserver (is the Go module proxy reachable? GOPROXY=${goEnv('GOPROXY')}): ${firstError.trim()}`,
      );
    }
    throw new ClusterError(
      `\`go mod download\` failed in test/apiserver: ${firstError.trim()} (log: ${files.buildLog})`,
    );
  }
  for (const [name, target, args] of [
    ['kube-apiserver', binaries.apiserver, ['-ldflags', apiserverLdflags(), 'k8s.io/kubernetes/cmd/kube-apiserver']],
    ['etcd', binaries.etcd, ['-ldflags', '-s -w', './etcd']],
  ] as const) {
    // Build beside the target and rename, so a running server never sees a half-written binary.
    const partial = `${target}.partial`;
    // -buildvcs=false: the module sits inside the project's git checkout, and VCS stamping fails where
    // git is missing or distrusts the directory; nothing reads the stamp.
    const build = runGo(['build', '-buildvcs=false', '-o', partial, ...args], `build ${name}`);
    if (!build.ok) {
      const tail = build.output.trim().split('\n').slice(-1)[0] ?? '';
      throw new ClusterError(`building ${name} failed: ${tail} (log: ${files.buildLog})`);
    }
    fs.renameSync(partial, target);
  }
  fs.writeFileSync(files.buildStamp, `${sourceHash()}\n`);
  log(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

function goEnv(name: string): string {
  const r = spawnSync('go', ['env', name], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '?';
}

/**
 * Runs fn while holding .cache/cluster/cluster.lock. Several people and test runs share one checkout;
 * two concurrent `up`s would build twice and start two servers over one state directory.
 */
export function withClusterLock<T>(fn: () => Promise<T>): Promise<T> {
  return withLock(path.join(stateDir, 'cluster.lock'), fn);
}

export async function withLock<T>(lock: string, fn: () => Promise<T>): Promise<T> {
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  let announced = false;
  for (;;) {
    try {
      fs.writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = Number.parseInt(fs.readFileSync(lock, 'utf8'), 10);
    if (!Number.isInteger(holder) || !processAlive(holder)) {
      fs.rmSync(lock, { force: true }); // left behind by a process that died
      continue;
    }
    if (!announced) log(`waiting for another cluster command (pid ${holder}) to finish`);
    announced = true;
    await sleep(1000);
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---------------------------------------------------------------------------------------------------
// Credentials and configuration

function openssl(args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: pkiDir, encoding: 'utf8' });
  if (r.error) throw new ClusterError('openssl is not installed: it generates the test CA and certificates');
  if (r.status !== 0) throw new ClusterError(`openssl ${args[0]} failed: ${r.stderr.trim().split('\n')[0]}`);
}

/** CA, serving certificate for 127.0.0.1/localhost, service-account key pair; kept across runs. */
function ensurePki(): void {
  fs.mkdirSync(pkiDir, { recursive: true });
  const needed = ['ca.crt', 'ca.key', 'server.crt', 'server.key', 'sa.key', 'sa.pub'];
  if (needed.every((f) => fs.existsSync(path.join(pkiDir, f)))) return;
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '3650',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-subj',
    '/CN=kube-conflict-hints test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=kube-apiserver',
  ]);
  fs.writeFileSync(
    path.join(pkiDir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc\n' +
      'extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n',
  );
  openssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '3650',
    '-extfile',
    'server.ext',
    '-out',
    'server.crt',
  ]);
  // Service-account tokens are signed with RSA by default (RS256).
  openssl(['genrsa', '-out', 'sa.key', '2048']);
  openssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}

function readTokens(): Record<TestUser, string> | undefined {
  if (!fs.existsSync(files.tokens)) return undefined;
  const tokens: Partial<Record<TestUser, string>> = {};
  for (const line of fs.readFileSync(files.tokens, 'utf8').split('\n')) {
    const [token, user] = line.split(',');
    if (token && users.includes(user as TestUser)) tokens[user as TestUser] = token;
  }
  return users.every((u) => tokens[u]) ? (tokens as Record<TestUser, string>) : undefined;
}

/** Static tokens (kube-apiserver --token-auth-file: token,user,uid,"groups"), kept across runs. */
function ensureTokens(): Record<TestUser, string> {
  const existing = readTokens();
  if (existing) return existing;
  const token = () => crypto.randomBytes(24).toString('hex');
  const tokens = { admin: token(), viewer: token(), stranger: token() };
  fs.writeFileSync(
    files.tokens,
    `${tokens.admin},admin,uid-admin,"system:masters"\n` +
      `${tokens.viewer},viewer,uid-viewer\n` +
      `${tokens.stranger},stranger,uid-stranger\n`,
    { mode: 0o600 },
  );
  return tokens;
}

// One line per request, at ResponseComplete: user, verb, requestURI (path and query), response code.
// Requests for Secrets are recorded with their bodies, so a test can read what each answer held
// (responseObject): the product must only ever be answered metadata, never a Secret's values.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
  resources:
  - group: ""
    resources: ["secrets"]
- level: Metadata
`;

function writeKubeconfig(server: string, tokens: Record<TestUser, string>): void {
  const caData = fs.readFileSync(path.join(pkiDir, 'ca.crt')).toString('base64');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kch-test', cluster: { server, 'certificate-authority-data': caData } }],
    users: users.map((u) => ({ name: u, user: { token: tokens[u] } })),
    contexts: users.map((u) => ({ name: u, context: { cluster: 'kch-test', user: u, namespace: 'default' } })),
    'current-context': 'admin',
    preferences: {},
  };
  fs.writeFileSync(files.kubeconfig, toYaml(config), { mode: 0o600 });
}

// ---------------------------------------------------------------------------------------------------
// Processes

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function startDetached(binary: string, args: string[], logName: string): number {
  const out = fs.openSync(path.join(logDir, logName), 'w');
  const child = spawn(binary, args, { detached: true, stdio: ['ignore', out, out], cwd: stateDir });
  fs.closeSync(out);
  if (child.pid === undefined) throw new ClusterError(`could not start ${binary}`);
  child.unref();
  return child.pid;
}

/** True when pid is alive and runs `binary` (a recycled pid, or a zombie, is never ours). */
function runs(pid: number, binary: string): boolean {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return (cmdline.split('\0')[0] ?? '') === binary;
  } catch {
    return false;
  }
}

/** The binaries a state file's processes run: recorded at start, or this checkout's for older files. */
function realpathOr(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

function binariesOf(state: RunningState): { etcd: string; apiserver: string } {
  return state.binaries ?? binaries;
}

/** Stops pid if it runs `binary`: SIGTERM, then SIGKILL. True when it no longer runs. */
async function stopProcess(pid: number, binary: string): Promise<boolean> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // Gone between the check and the signal.
    }
  };
  if (!pid || !runs(pid, binary)) return true;
  signal('SIGTERM');
  for (let i = 0; i < 100 && runs(pid, binary); i++) await sleep(100);
  if (runs(pid, binary)) signal('SIGKILL');
  for (let i = 0; i < 50 && runs(pid, binary); i++) await sleep(100);
  return !runs(pid, binary);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

interface HttpAnswer {
  status: number;
  body: string;
}

function httpsRequest(
  server: string,
  token: string,
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<HttpAnswer> {
  const ca = fs.readFileSync(path.join(pkiDir, 'ca.crt'));
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(urlPath, server),
      {
        method,
        ca,
        timeout: 5000,
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: 'application/json',
          ...(payload ? { 'Content-Type': 'application/apply-patch+yaml' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(payload);
  });
}

async function waitFor(what: string, seconds: number, check: () => Promise<boolean>, logName: string): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    // A ClusterError (the process died) ends the wait; anything else (refused, 503) means not yet.
    const ready = await check().catch((e: unknown) => {
      if (e instanceof ClusterError) throw e;
      return false;
    });
    if (ready) return;
    await sleep(250);
  }
  throw new ClusterError(`${what} not ready after ${seconds} s (log: ${path.join(logDir, logName)})`);
}

function readState(): RunningState | undefined {
  try {
    return JSON.parse(fs.readFileSync(files.state, 'utf8')) as RunningState;
  } catch {
    return undefined;
  }
}

/** True when the recorded cluster answers /readyz, whichever binaries it was started from. */
async function isServing(state: RunningState | undefined): Promise<boolean> {
  if (!state) return false;
  const running = binariesOf(state);
  if (!runs(state.pids.etcd, running.etcd) || !runs(state.pids.apiserver, running.apiserver)) return false;
  if (!fs.existsSync(files.env) || !fs.existsSync(files.kubeconfig)) return false;
  // A server started with an older audit policy records less than the tests read: start anew.
  if (!fs.existsSync(files.auditPolicy) || fs.readFileSync(files.auditPolicy, 'utf8') !== auditPolicy) return false;
  const tokens = readTokens();
  if (!tokens) return false;
  const ready = await httpsRequest(state.server, tokens.admin, 'GET', '/readyz').catch(() => undefined);
  return ready?.status === 200;
}

/** True when a cluster of this checkout's binaries (KCH_APISERVER_BIN_DIR) is serving. */
export async function isHealthy(): Promise<boolean> {
  const state = readState();
  if (!state) return false;
  const running = binariesOf(state);
  // The same files under two names (a checkout whose .cache links to another's) are the same binaries.
  const same = (a: string, b: string) => a === b || realpathOr(a) === realpathOr(b);
  return same(running.etcd, binaries.etcd) && same(running.apiserver, binaries.apiserver) && (await isServing(state));
}

// viewer: read everything, nothing else. Applied as admin once the server is ready.
const viewerRbac = [
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'kch-viewer' },
    rules: [
      { apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch'] },
      { nonResourceURLs: ['*'], verbs: ['get'] },
    ],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'kch-viewer' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kch-viewer' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }],
  },
];

/**
 * Starts etcd (empty data) and kube-apiserver; returns when /readyz is ok and RBAC is in place. A
 * cluster already serving from the same binaries is reused; one from other binaries is stopped first.
 */
export async function up(): Promise<ClusterEnv> {
  if (await isHealthy()) return readEnv();
  await down();
  await ensureBinaries();
  try {
    return await start();
  } catch (e) {
    // Never leave half a cluster running; the start's failure is the one to report.
    await down().catch((stopFailure: unknown) =>
      log(stopFailure instanceof Error ? stopFailure.message : String(stopFailure)),
    );
    throw e;
  }
}

async function start(): Promise<ClusterEnv> {
  fs.mkdirSync(logDir, { recursive: true });
  ensurePki();
  const tokens = ensureTokens();
  fs.writeFileSync(files.auditPolicy, auditPolicy);
  // Every start is an empty cluster: a fresh etcd data dir and a fresh audit log.
  fs.rmSync(files.etcdData, { recursive: true, force: true });
  fs.rmSync(files.auditLog, { force: true });

  const [etcdClientPort, etcdPeerPort, apiserverPort] = [await freePort(), await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
  const server = `https://127.0.0.1:${apiserverPort}`;
  const started = Date.now();

  const etcdPid = startDetached(
    binaries.etcd,
    [
      `--data-dir=${files.etcdData}`,
      `--listen-client-url=${etcdUrl}`,
      `--listen-peer-url=http://127.0.0.1:${etcdPeerPort}`,
    ],
    'etcd.log',
  );
  const state: RunningState = { server, etcdUrl, pids: { etcd: etcdPid, apiserver: 0 }, binaries: { ...binaries } };
  fs.writeFileSync(files.state, JSON.stringify(state, null, 2));
  await waitFor(
    'etcd',
    30,
    async () => {
      if (!runs(etcdPid, binaries.etcd))
        throw new ClusterError(`etcd exited during start (log: ${path.join(logDir, 'etcd.log')})`);
      const res = await fetch(`${etcdUrl}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    },
    'etcd.log',
  );

  const pki = (f: string) => path.join(pkiDir, f);
  state.pids.apiserver = startDetached(
    binaries.apiserver,
    [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiserverPort}`,
      `--tls-cert-file=${pki('server.crt')}`,
      `--tls-private-key-file=${pki('server.key')}`,
      `--client-ca-file=${pki('ca.crt')}`,
      '--authorization-mode=RBAC',
      `--token-auth-file=${files.tokens}`,
      // No controller manager creates the `default` ServiceAccount, so Pods would be refused without this.
      '--disable-admission-plugins=ServiceAccount',
      '--service-cluster-ip-range=10.96.0.0/16',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki('sa.pub')}`,
      `--service-account-signing-key-file=${pki('sa.key')}`,
      // The kubernetes Service cannot have a loopback endpoint; nothing needs it here.
      '--endpoint-reconciler-type=none',
      `--audit-policy-file=${files.auditPolicy}`,
      `--audit-log-path=${files.auditLog}`,
      '--audit-log-format=json',
      '--audit-log-mode=blocking',
      '--profiling=false',
    ],
    'kube-apiserver.log',
  );
  fs.writeFileSync(files.state, JSON.stringify(state, null, 2));

  await waitFor(
    'kube-apiserver',
    90,
    async () => {
      if (!runs(state.pids.apiserver, binaries.apiserver)) {
        throw new ClusterError(`kube-apiserver exited during start (log: ${path.join(logDir, 'kube-apiserver.log')})`);
      }
      return (await httpsRequest(server, tokens.admin, 'GET', '/readyz')).status === 200;
    },
    'kube-apiserver.log',
  );

  for (const object of viewerRbac) {
    const kind = object.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings';
    const res = await httpsRequest(
      server,
      tokens.admin,
      'PATCH',
      `/apis/rbac.authorization.k8s.io/v1/${kind}/${object.metadata.name}?fieldManager=kch-test-setup&force=true`,
      object,
    );
    if (res.status >= 300)
      throw new ClusterError(`creating ${kind}/${object.metadata.name} failed: ${res.status} ${res.body}`);
  }
  // The system namespaces controller creates `default` shortly after readiness; the kubeconfig names it.
  await waitFor(
    'namespace default',
    30,
    async () => (await httpsRequest(server, tokens.admin, 'GET', '/api/v1/namespaces/default')).status === 200,
    'kube-apiserver.log',
  );

  writeKubeconfig(server, tokens);
  const env: ClusterEnv = { kubeconfig: files.kubeconfig, auditLog: files.auditLog, server };
  fs.writeFileSync(files.env, JSON.stringify(env, null, 2) + '\n');
  log(`kube-apiserver ${kubernetesVersion} ready at ${server} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return env;
}

export function readEnv(): ClusterEnv {
  return JSON.parse(fs.readFileSync(files.env, 'utf8')) as ClusterEnv;
}

/**
 * Stops both processes (idempotent) and removes env.json so nothing mistakes the cluster for running.
 * The processes are recognised by the binaries state.json recorded, so a cluster started with another
 * KCH_APISERVER_BIN_DIR stops too; state.json stays as long as one of them still runs, so a later
 * `down` can try again instead of orphaning them.
 */
export async function down(): Promise<void> {
  const state = readState();
  if (state) {
    const running = binariesOf(state);
    const stopped = [
      (await stopProcess(state.pids.apiserver, running.apiserver)) || `kube-apiserver (pid ${state.pids.apiserver})`,
      (await stopProcess(state.pids.etcd, running.etcd)) || `etcd (pid ${state.pids.etcd})`,
    ];
    const left = stopped.filter((s): s is string => typeof s === 'string');
    if (left.length > 0) throw new ClusterError(`could not stop ${left.join(' and ')}; state kept in ${files.state}`);
  }
  fs.rmSync(files.state, { force: true });
  fs.rmSync(files.env, { force: true });
}

export interface ClusterStatus {
  running: boolean;
  server?: string;
  kubeconfig?: string;
  auditLog?: string;
}

export async function status(): Promise<ClusterStatus> {
  if (!(await isServing(readState()))) return { running: false };
  return { running: true, ...readEnv() };
}

// ---------------------------------------------------------------------------------------------------
// Audit log

/** The fields of an audit.k8s.io/v1 Event that tests look at (one JSON line per request). */
export interface AuditEvent {
  auditID: string;
  stage: string;
  verb: string;
  /** Path and query exactly as the client sent them. */
  requestURI: string;
  user: { username: string; groups?: string[] };
  userAgent?: string;
  objectRef?: {
    resource?: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
    apiVersion?: string;
    subresource?: string;
  };
  responseStatus?: { code?: number; reason?: string };
  requestReceivedTimestamp?: string;
  /** The answer's body, for requests the policy records at RequestResponse (Secrets). */
  responseObject?: { kind?: string; apiVersion?: string; [key: string]: unknown };
}

/**
 * What the log has read so far, per log file: a wait polls every 100 ms, and a full run's log holds
 * thousands of events, so each read parses only the lines written since the last one.
 */
const auditReads = new Map<string, { file: string; offset: number; rest: Buffer; events: AuditEvent[] }>();

/** Every complete event in the log, in order (a line still being written is left for the next read). */
export function readAuditEvents(auditLog: string): AuditEvent[] {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(auditLog);
  } catch {
    return [];
  }
  let read = auditReads.get(auditLog);
  // A new cluster starts a new log: begin again when the file was replaced or cut.
  const file = `${stat.ino}:${stat.birthtimeMs}`;
  if (!read || read.file !== file || stat.size < read.offset) {
    read = { file, offset: 0, rest: Buffer.alloc(0), events: [] };
    auditReads.set(auditLog, read);
  }
  if (stat.size > read.offset) {
    const chunk = Buffer.alloc(stat.size - read.offset);
    const fd = fs.openSync(auditLog, 'r');
    try {
      const n = fs.readSync(fd, chunk, 0, chunk.length, read.offset);
      read.offset += n;
      const bytes = Buffer.concat([read.rest, chunk.subarray(0, n)]);
      const lastNewline = bytes.lastIndexOf(0x0a);
      read.rest = bytes.subarray(lastNewline + 1);
      for (const line of bytes
        .subarray(0, lastNewline + 1)
        .toString('utf8')
        .split('\n')) {
        if (!line.trim()) continue;
        try {
          read.events.push(JSON.parse(line) as AuditEvent);
        } catch {
          // not an event: nothing a test looks for
        }
      }
    } finally {
      fs.closeSync(fd);
    }
  }
  return read.events.slice();
}

/**
 * Lets go of what was read of the log (a long run's log holds a hundred thousand events): the next
 * read parses it again from the start. For a measurement that must not share the machine with a
 * large heap of the test's own.
 */
export function forgetAuditEvents(auditLog: string): void {
  auditReads.delete(auditLog);
}

/**
 * Waits until `holds` is true of the whole log (read once per poll), e.g. "a second list of that
 * namespace": a condition on several events. Returns the events it held for, or undefined.
 */
export async function waitForAuditLog(
  auditLog: string,
  holds: (events: AuditEvent[]) => boolean,
  timeoutMs = 10_000,
): Promise<AuditEvent[] | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = readAuditEvents(auditLog);
    if (holds(events)) return events;
    if (Date.now() > deadline) return undefined;
    await sleep(100);
  }
}

/**
 * The first audit event matching, waiting for it: the server may write the ResponseComplete event
 * after the client has its response, so a client can read the log before its own request appears.
 */
export async function waitForAuditEvent(
  auditLog: string,
  matches: (e: AuditEvent) => boolean,
  timeoutMs = 10_000,
): Promise<AuditEvent | undefined> {
  return (await waitForAuditLog(auditLog, (events) => events.some(matches), timeoutMs))?.find(matches);
}

/**
 * The positive signal before any "nothing else was sent" judgement on the audit log: a sentinel
 * request (a GET of a ConfigMap name nobody uses) sent now, after the requests under judgement
 * have their answers, and waited for in the log. The server logs each request as it completes, so
 * once the sentinel is there the earlier requests are too; a log read before it can miss them.
 */
export async function auditSentinel(
  auditLog: string,
  send: (urlPath: string) => Promise<unknown>,
  timeoutMs = 30_000,
): Promise<AuditEvent> {
  const name = `kch-sentinel-${process.pid}-${Date.now().toString(36)}-${crypto.randomBytes(3).toString('hex')}`;
  const urlPath = `/api/v1/namespaces/default/configmaps/${name}`;
  await send(urlPath);
  const event = await waitForAuditEvent(
    auditLog,
    (e) => e.requestURI === urlPath && e.stage === 'ResponseComplete',
    timeoutMs,
  );
  if (!event)
    throw new Error(
      `the sentinel request ${urlPath} never reached the audit log ${auditLog}: nothing can be concluded from it`,
    );
  return event;
}
