// Reading kubeconfig files. Parsing and every kind of authentication (token, client certificate,
// exec plugin, auth provider) are @kubernetes/client-node's; this file only decides which files are
// read, how several of them merge, and how a file is read at all.
//
// The path comes from a setting, so it may name anything: /dev/zero, a FIFO nobody writes to, a
// directory, a file of a gigabyte. Every read here is asynchronous and bounded: the file is opened
// without blocking, must be a regular file, and is read only up to a size no kubeconfig reaches.
// Files the kubeconfig itself names (certificate authority, client certificate and key) are read
// the same way, once, here: client-node would read them synchronously on every request.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { Cluster, Context, User } from '@kubernetes/client-node/dist/config_types.js';
import { parse as parseYaml } from 'yaml';
import { readSmallFileAsync } from '../render/small-file';
import { withoutUserinfo } from './redact';
import type { ClusterProblem, ClusterResult, ContextSummary, KubeconfigSummary } from './types';

/** A kubeconfig ready to authenticate requests for one context. Internal to the cluster layer. */
export interface SelectedContext {
  config: KubeConfig;
  summary: KubeconfigSummary;
  context: ContextSummary;
  /** The server URL as the kubeconfig writes it, userinfo included: for requests, never shown (context.server is). */
  server: string;
  /** The context's namespace, else "default". */
  contextNamespace: string;
}

export interface LoadedKubeconfig {
  config: KubeConfig;
  summary: KubeconfigSummary;
}

/**
 * Larger than any real kubeconfig (a few KB, a few hundred KB with many embedded certificates),
 * small enough that reading and parsing it never holds the server up.
 */
export const MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024;
/** Certificates, keys and token files are far smaller still. */
const MAX_CREDENTIAL_FILE_BYTES = 1024 * 1024;

/** The files kubectl would read, in order: an explicit path, else KUBECONFIG's list, else ~/.kube/config. */
export async function kubeconfigFiles(
  explicitPath: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string[]> {
  const named = kubeconfigPaths(explicitPath, env);
  // client-go skips files of KUBECONFIG's list that do not exist (clientcmd/loader.go, Load); an
  // explicit path that does not exist is an error, said when it is read.
  if (explicitPath) return named;
  const present = await Promise.all(named.map(exists));
  return named.filter((_, i) => present[i]);
}

/**
 * Every file the kubeconfig may come from, whether it exists now or not: an explicit path, else
 * KUBECONFIG's entries (empty ones skipped, as client-go does), else ~/.kube/config. A file that
 * appears, changes or goes changes the kubeconfig.
 */
export function kubeconfigPaths(explicitPath: string | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  if (explicitPath) return [expandHome(explicitPath)];
  const fromEnv = env.KUBECONFIG;
  if (fromEnv)
    return fromEnv
      .split(path.delimiter)
      .filter((file) => file.length > 0)
      .map(expandHome);
  return [path.join(os.homedir(), '.kube', 'config')];
}

/**
 * Load and merge kubeconfig files with kubectl's rule (clientcmd/loader.go): the first file that
 * defines a cluster, user or context name wins, and so does the first current-context.
 * client-node's own merge lets later files override current-context and throws on duplicate
 * names, which would make a working `kubectl` setup fail here.
 */
export async function loadKubeconfig(
  explicitPath?: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ClusterResult<LoadedKubeconfig>> {
  const files = await kubeconfigFiles(explicitPath, env);
  if (files.length === 0) {
    const where = explicitPath ? explicitPath : env.KUBECONFIG ? `KUBECONFIG (${env.KUBECONFIG})` : '~/.kube/config';
    return configurationProblem(`No kubeconfig found at ${where}.`);
  }
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext: string | undefined;
  for (const file of files) {
    const read = await readBoundedFile(file, MAX_KUBECONFIG_BYTES);
    if (!read.ok) return configurationProblem(`Cannot read kubeconfig ${file}: ${read.message}`);
    const text = await inlineTokenFiles(read.value, path.dirname(file));
    if (!text.ok) return configurationProblem(`Cannot read kubeconfig ${file}: ${text.message}`);
    const one = new KubeConfig();
    try {
      // `filter` drops a malformed entry instead of rejecting the whole file.
      one.loadFromString(text.value, { onInvalidEntry: 'filter' });
    } catch (error) {
      return configurationProblem(`Cannot read kubeconfig ${file}: ${errorMessage(error)}`);
    }
    // Relative certificate paths are relative to the file that names them, as with kubectl.
    one.makePathsAbsolute(path.dirname(file));
    for (const c of one.getClusters()) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of one.getUsers()) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of one.getContexts()) if (!contexts.has(c.name)) contexts.set(c.name, c);
    if (!currentContext && one.getCurrentContext()) currentContext = one.getCurrentContext();
  }
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext,
  });
  const summary: KubeconfigSummary = {
    files,
    contexts: [...contexts.values()].map((c) => summarizeContext(c, clusters.get(c.cluster))),
    ...(currentContext ? { currentContext } : {}),
  };
  return { ok: true, value: { config, summary } };
}

/**
 * The same entries in a KubeConfig of their own: selecting a context changes the config it is given
 * (its current context, its inlined credential files), so each connection selects in its own copy.
 */
export function copyLoadedKubeconfig(loaded: LoadedKubeconfig): LoadedKubeconfig {
  const config = new KubeConfig();
  const { clusters, users, contexts, currentContext } = loaded.config;
  config.loadFromOptions({ clusters: [...clusters], users: [...users], contexts: [...contexts], currentContext });
  return { config, summary: loaded.summary };
}

/** Point a loaded kubeconfig at one context (the settings' context, else the current one). */
export async function selectLoadedContext(
  loaded: LoadedKubeconfig,
  contextName: string | undefined,
): Promise<ClusterResult<SelectedContext>> {
  const { config, summary } = loaded;
  const name = contextName || summary.currentContext;
  if (!name) return configurationProblem('The kubeconfig names no current-context; pick a context.');
  const context = summary.contexts.find((c) => c.name === name);
  if (!context) {
    const known = summary.contexts.map((c) => c.name).join(', ') || 'none';
    return configurationProblem(`Context "${name}" is not in the kubeconfig (contexts: ${known}).`);
  }
  // The summary shows the server without its userinfo; requests go to the URL as written.
  const cluster = config.getCluster(context.cluster);
  const server = cluster?.server;
  if (!context.server || !server)
    return configurationProblem(`Context "${name}" refers to cluster "${context.cluster}", which has no server.`);
  // Neither URL is quoted: one that does not parse has no userinfo to leave out.
  if (!URL.canParse(server) || !/^https?:$/.test(new URL(server).protocol)) {
    return configurationProblem(
      `Cluster "${context.cluster}" of context "${name}" has a server that is not an http(s) URL.`,
    );
  }
  if (cluster.proxyUrl !== undefined && !URL.canParse(cluster.proxyUrl)) {
    return configurationProblem(`Cluster "${context.cluster}" of context "${name}" has a proxy-url that is not a URL.`);
  }
  const inlined = await inlineCredentialFiles(config, context);
  if (!inlined.ok) return inlined;
  config.setCurrentContext(name);
  return {
    ok: true,
    value: { config, summary, context, server, contextNamespace: context.namespace || 'default' },
  };
}

/**
 * The context's certificate authority, client certificate and key, read now (asynchronously and
 * bounded) and kept as data, so no request reads a file. Token files stay files: they rotate, and
 * client-node rereads them; they are only checked to be small regular files.
 */
async function inlineCredentialFiles(config: KubeConfig, context: ContextSummary): Promise<ClusterResult<void>> {
  const cluster = config.getCluster(context.cluster);
  const user = config.getUser(context.user);
  const read = async (file: string, what: string): Promise<ClusterResult<string>> => {
    const content = await readBoundedFile(file, MAX_CREDENTIAL_FILE_BYTES, 'base64');
    return content.ok
      ? content
      : configurationProblem(`Cannot read the ${what} ${file} named by context "${context.name}": ${content.message}`);
  };
  const clusters = config.clusters.map((c) => ({ ...c }));
  const users = config.users.map((u) => ({ ...u }));
  const targetCluster = clusters.find((c) => c.name === cluster?.name);
  const targetUser = users.find((u) => u.name === user?.name);
  if (targetCluster?.caFile) {
    const ca = await read(targetCluster.caFile, 'certificate authority');
    if (!ca.ok) return ca;
    Object.assign(targetCluster, { caData: ca.value, caFile: undefined });
  }
  if (targetUser?.certFile) {
    const cert = await read(targetUser.certFile, 'client certificate');
    if (!cert.ok) return cert;
    Object.assign(targetUser, { certData: cert.value, certFile: undefined });
  }
  if (targetUser?.keyFile) {
    const key = await read(targetUser.keyFile, 'client key');
    if (!key.ok) return key;
    Object.assign(targetUser, { keyData: key.value, keyFile: undefined });
  }
  const tokenFile = (targetUser?.authProvider as { config?: { tokenFile?: unknown } } | undefined)?.config?.tokenFile;
  if (typeof tokenFile === 'string' && tokenFile !== '') {
    const token = await readBoundedFile(tokenFile, MAX_CREDENTIAL_FILE_BYTES);
    if (!token.ok)
      return configurationProblem(
        `Cannot read the token file ${tokenFile} named by context "${context.name}": ${token.message}`,
      );
  }
  config.loadFromOptions({ clusters, users, contexts: config.contexts, currentContext: config.currentContext });
  return { ok: true, value: undefined };
}

/**
 * A user's `token-file`, read here and written into the kubeconfig as its `token`: client-node
 * would read it synchronously while parsing (and only then, so the token is as fresh either way).
 * Relative paths are relative to the kubeconfig, as kubectl resolves them.
 */
async function inlineTokenFiles(
  text: string,
  directory: string,
): Promise<{ ok: true; value: string } | { ok: false; message: string }> {
  if (!text.includes('token-file')) return { ok: true, value: text };
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch {
    return { ok: true, value: text }; // client-node reports the syntax error
  }
  const users = (parsed as { users?: unknown } | null)?.users;
  if (!Array.isArray(users)) return { ok: true, value: text };
  for (const entry of users) {
    const user = (entry as { user?: Record<string, unknown> } | null)?.user;
    const file = user?.['token-file'];
    if (!user || typeof file !== 'string') continue;
    delete user['token-file'];
    if (typeof user.token === 'string' && user.token) continue; // a token wins over a token file
    const token = await readBoundedFile(path.resolve(directory, expandHome(file)), MAX_CREDENTIAL_FILE_BYTES);
    if (!token.ok) return { ok: false, message: `its token-file ${file}: ${token.message}` };
    user.token = token.value.trim();
  }
  return { ok: true, value: JSON.stringify(parsed) };
}

/**
 * A file's content, read without ever blocking the event loop or reading without end (the small-file
 * reader: a regular file, not a device, FIFO, socket or directory, of at most `maxBytes`, opened
 * non-blocking), its problems in the words of a kubeconfig's; a file that grows meanwhile is refused.
 */
export async function readBoundedFile(
  file: string,
  maxBytes: number,
  encoding: BufferEncoding = 'utf8',
): Promise<{ ok: true; value: string } | { ok: false; message: string }> {
  const read = await readSmallFileAsync(file, { maxBytes });
  // A file that grew while it was read is refused, whatever its size.
  if (read.ok)
    return read.grew
      ? { ok: false, message: 'it grew while it was being read' }
      : { ok: true, value: read.bytes.toString(encoding) };
  switch (read.refused) {
    case 'not-regular':
      return { ok: false, message: `it is ${fileKind(read.stat)}, not a regular file` };
    case 'too-large':
      return {
        ok: false,
        message: read.grew
          ? 'it grew while it was being read'
          : `it is ${formatBytes(read.size)}, over the limit of ${formatBytes(maxBytes)}`,
      };
    case 'error':
      return { ok: false, message: fileErrorMessage(read.error) };
  }
}

async function exists(file: string): Promise<boolean> {
  // stat never opens the file: a FIFO or a device answers at once.
  return fs.promises.stat(file).then(
    () => true,
    () => false,
  );
}

function fileKind(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a named pipe (FIFO)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

function fileErrorMessage(error: unknown): string {
  switch ((error as NodeJS.ErrnoException)?.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory, not a regular file';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    default:
      return errorMessage(error);
  }
}

function summarizeContext(context: Context, cluster: Cluster | undefined): ContextSummary {
  return {
    name: context.name,
    cluster: context.cluster,
    user: context.user,
    ...(context.namespace ? { namespace: context.namespace } : {}),
    ...(cluster?.server ? { server: withoutUserinfo(cluster.server) } : {}),
  };
}

function expandHome(file: string): string {
  return file === '~' || file.startsWith('~/') ? path.join(os.homedir(), file.slice(1)) : file;
}

function configurationProblem(message: string): { ok: false; problem: ClusterProblem } {
  return { ok: false, problem: { kind: 'configuration', message } };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
