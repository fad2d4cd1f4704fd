// Reading kubeconfig files. Parsing and every kind of authentication (token, client certificate,
// exec plugin, auth provider) are @kubernetes/client-node's; this file only decides which files are
// read and how several of them merge.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';
import type { ClusterProblem, ClusterResult, ContextSummary, KubeconfigSummary } from './types';

/** A kubeconfig ready to authenticate requests for one context. Internal to the cluster layer. */
export interface SelectedContext {
  config: KubeConfig;
  summary: KubeconfigSummary;
  context: ContextSummary;
  server: string;
  /** The context's namespace, else "default". */
  contextNamespace: string;
}

/** The files kubectl would read, in order: an explicit path, else KUBECONFIG's list, else ~/.kube/config. */
export function kubeconfigFiles(explicitPath: string | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  if (explicitPath) return [expandHome(explicitPath)];
  const fromEnv = env.KUBECONFIG;
  if (fromEnv) {
    // client-go skips empty entries and files that do not exist (clientcmd/loader.go, Load).
    return fromEnv
      .split(path.delimiter)
      .filter((file) => file.length > 0)
      .map(expandHome)
      .filter((file) => fs.existsSync(file));
  }
  const home = path.join(os.homedir(), '.kube', 'config');
  return fs.existsSync(home) ? [home] : [];
}

/**
 * Load and merge kubeconfig files with kubectl's rule (clientcmd/loader.go): the first file that
 * defines a cluster, user or context name wins, and so does the first current-context.
 * client-node's own merge lets later files override current-context and throws on duplicate
 * names, which would make a working `kubectl` setup fail here.
 */
export function loadKubeconfig(explicitPath?: string, env: NodeJS.ProcessEnv = process.env): ClusterResult<{ config: KubeConfig; summary: KubeconfigSummary }> {
  const files = kubeconfigFiles(explicitPath, env);
  if (files.length === 0) {
    const where = explicitPath ? explicitPath : env.KUBECONFIG ? `KUBECONFIG (${env.KUBECONFIG})` : '~/.kube/config';
    return configurationProblem(`No kubeconfig found at ${where}.`);
  }
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext: string | undefined;
  for (const file of files) {
    const one = new KubeConfig();
    try {
      // `filter` drops a malformed entry instead of rejecting the whole file.
      one.loadFromFile(file, { onInvalidEntry: 'filter' });
    } catch (error) {
      return configurationProblem(`Cannot read kubeconfig ${file}: ${errorMessage(error)}`);
    }
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

/** Load the kubeconfig and point it at one context (the settings' context, else the current one). */
export function selectContext(explicitPath: string | undefined, contextName: string | undefined, env: NodeJS.ProcessEnv = process.env): ClusterResult<SelectedContext> {
  const loaded = loadKubeconfig(explicitPath, env);
  if (!loaded.ok) return loaded;
  const { config, summary } = loaded.value;
  const name = contextName || summary.currentContext;
  if (!name) return configurationProblem('The kubeconfig names no current-context; pick a context.');
  const context = summary.contexts.find((c) => c.name === name);
  if (!context) {
    const known = summary.contexts.map((c) => c.name).join(', ') || 'none';
    return configurationProblem(`Context "${name}" is not in the kubeconfig (contexts: ${known}).`);
  }
  if (!context.server) return configurationProblem(`Context "${name}" refers to cluster "${context.cluster}", which has no server.`);
  config.setCurrentContext(name);
  return {
    ok: true,
    value: { config, summary, context, server: context.server, contextNamespace: context.namespace || 'default' },
  };
}

function summarizeContext(context: Context, cluster: Cluster | undefined): ContextSummary {
  return {
    name: context.name,
    cluster: context.cluster,
    user: context.user,
    ...(context.namespace ? { namespace: context.namespace } : {}),
    ...(cluster?.server ? { server: cluster.server } : {}),
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
