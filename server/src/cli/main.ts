// Command-line entry (`kube-conflict-hints`, dist/cli.js): the check for CI and terminals, and
// offline snapshots. Results go to stdout, one-line problems to stderr; exit 0 clean, 1 findings or
// something not judged, 2 usage or cluster problems.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createClusterConnection,
  createClusterShare,
  KubeconfigOnce,
  redactText,
  type ClusterConnection,
  type ClusterProblem,
  type ClusterShare,
} from '../cluster';
import { formatJson } from './format-json';
import { formatSarif } from './format-sarif';
import { formatText } from './format-text';
import { exitCodeFor, summarize, type CheckReport } from './report';
import {
  parseCommandLine,
  usage,
  type CheckCommand,
  type ClusterOptions,
  type FleetOptions,
  type SnapshotCommand,
} from './args';
import { createCheckShare, runCheck, type CheckOutcome, type CheckShare } from './check';
import { isControllerName } from '../core/gitops/model';
import { keepTypedConfigs } from '../core/ssa/predict';
import { applierOfFile, gitRepositoryOf } from '../render/git-repository';
import {
  fleetReport,
  fleetSnapshotFolders,
  prepareFleetDirectory,
  readFleetIndex,
  resolveContexts,
  runContexts,
  troubleOf,
  writeFleetIndex,
  type ContextRun,
  type FleetSnapshotIndex,
} from './fleet';
import { liveFactsReader, type FactsReader } from './facts';
import { collectManifestFiles, displayPath, readStandardInput, stdinTarget, type FileText } from './files';
import { formatGithub } from './format-github';
import { formatGitlab } from './format-gitlab';
import { languageServerCommand } from './lsp-command';
import { printableLine } from './printable';
import { terminalProgress, type CheckProgress } from './progress';
import { loadSnapshot, takeSnapshot } from './snapshot';

const programName = 'kube-conflict-hints';

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'lsp') {
    // The language server for editors other than VS Code (see lsp-command.ts).
    const lsp = languageServerCommand(argv.slice(1), __dirname);
    if (!lsp.ok) return fail(lsp.message);
    if ('help' in lsp) return write(process.stdout, lsp.help).then(() => 0);
    return lsp.start();
  }
  const parsed = parseCommandLine(argv);
  if (!parsed.ok) return fail(parsed.message);
  const command = parsed.command;
  switch (command.command) {
    case 'help':
      await write(process.stdout, usage);
      return 0;
    case 'version':
      await write(process.stdout, `${toolVersion()}\n`);
      return 0;
    case 'check':
      return check(command);
    case 'snapshot':
      return snapshot(command);
  }
}

async function check(command: CheckCommand): Promise<number> {
  const files = collectManifestFiles(command.targets, { stdin: true });
  if (!files.ok) return fail(files.message);
  // Read before any cluster is asked, so that bad input is one line and no request.
  let stdin: FileText | undefined;
  if (files.files.includes(stdinTarget)) {
    stdin = await readStandardInput();
    if (!stdin.ok) return fail(stdin.message);
  }
  if (command.fleet) return checkFleet(command, command.fleet, files.files, stdin);
  let reader: FactsReader;
  let connection: ClusterConnection | undefined;
  if (command.snapshot !== undefined) {
    const fleet = readFleetIndex(command.snapshot);
    if (fleet.state === 'invalid') return fail(fleet.message);
    if (fleet.state === 'ok') return checkFleetSnapshot(command, command.snapshot, fleet.index, files.files, stdin);
    const loaded = loadSnapshot(command.snapshot, command.namespace);
    if (!loaded.ok) return fail(loaded.message);
    reader = loaded.reader;
  } else {
    connection = await connect(command);
    reader = liveFactsReader(connection);
  }
  const progress = terminalProgress(process.stderr);
  try {
    const outcome = await checkWith(command, files.files, stdin, reader, connection, (p) => progress.update(p));
    progress.finish();
    if (!outcome.ok)
      return 'usage' in outcome
        ? fail(outcome.usage)
        : fail(describeProblem(outcome.problem, connection, command.verify));
    await write(process.stdout, render(outcome.report, command));
    return exitCodeFor(summarize(outcome.report));
  } finally {
    progress.finish();
    reader.close();
  }
}

/** The check of the files against one cluster or snapshot: the one path every context goes through. */
function checkWith(
  command: CheckCommand,
  files: readonly string[],
  stdin: FileText | undefined,
  reader: FactsReader,
  connection: ClusterConnection | undefined,
  onProgress?: (progress: CheckProgress) => void,
  context: string | undefined = command.context,
  /** The checks of a fleet's contexts: each keeps the fields it reads, and they parse and render once between them. */
  fleet?: CheckShare,
): Promise<CheckOutcome> {
  const searchRoot = command.searchRoot ?? process.cwd();
  const rendering = {
    kustomizations: command.kustomizations,
    // The search root is the checked folder: no tool is taken from it by name, no overlay reads out of it.
    settings: {
      ...(command.kustomizeBinary !== undefined ? { kustomize: command.kustomizeBinary } : {}),
      ...(command.helmBinary !== undefined ? { helm: command.helmBinary } : {}),
      workspace: path.resolve(searchRoot),
    },
    // A release lands in -n, else the context's namespace, as `helm install` without -n does.
    helm: {
      charts: command.charts,
      valuesFiles: command.valuesFiles,
      namespace: command.namespace ?? connection?.defaultNamespace ?? 'default',
      ...(command.release !== undefined ? { release: command.release } : {}),
      named: {
        ...(command.release !== undefined ? { release: command.release } : {}),
        ...(command.namespace !== undefined ? { namespace: command.namespace } : {}),
      },
    },
    searchRoot,
  };
  const kubectl = {
    ...(command.kubeconfig !== undefined ? { kubeconfig: command.kubeconfig } : {}),
    ...(context !== undefined ? { context } : {}),
    ...(command.namespace !== undefined ? { namespace: command.namespace } : {}),
  };
  const applier = command.applier;
  // A controller named outright sends every object, overlays' included; `auto` decides per file.
  const named = isControllerName(applier) ? { name: applier, because: `--applier ${applier}` } : undefined;
  const applierOf =
    applier === 'auto'
      ? async (file: string, text: string) => {
          const resolved = path.resolve(file);
          // Outside a checkout with a remote nothing can match: the controllers' sources are not read.
          if (!connection || (gitRepositoryOf(resolved)?.remotes.length ?? 0) === 0) return undefined;
          return applierOfFile(applier, resolved, text, await connection.gitopsPolicies.repositorySources());
        }
      : undefined;
  return runCheck(
    files,
    reader,
    { fieldManager: command.fieldManager, applyMode: command.mode, ...(named ? { controller: named } : {}) },
    command.verify ? connection : undefined,
    stdin,
    onProgress,
    rendering,
    kubectl,
    { ...(fleet ? { fieldStates: true, shared: fleet } : {}), ...(applierOf ? { applierOf } : {}) },
  );
}

/**
 * Several contexts side by side: each checked by the one path above, at most --parallel at once,
 * each within --context-timeout; a context that cannot be reached is its own column's "not judged".
 */
async function checkFleet(
  command: CheckCommand,
  fleet: FleetOptions,
  files: readonly string[],
  stdin: FileText | undefined,
): Promise<number> {
  // One kubeconfig, read once for every context.
  const kubeconfigOnce = new KubeconfigOnce(command.kubeconfig ?? '');
  const kubeconfig = await kubeconfigOnce.summary();
  if (!kubeconfig.ok) return fail(`kubeconfig: ${kubeconfig.problem.message}`);
  const resolved = resolveContexts(kubeconfig.value, fleet.names, fleet.globs);
  if (!resolved.ok) return fail(resolved.message);
  const once = createCheckShare();
  // The contexts judge the same objects side by side: each typing of an object is kept for the others.
  keepTypedConfigs(256);
  // The contexts' connections share the OpenAPI documents that name the same content, and what is built from them.
  const share = createClusterShare();
  const runs = await runContexts(
    resolved.contexts,
    { parallel: fleet.parallel, timeoutMs: fleet.timeoutSeconds * 1000 },
    (context) => {
      let reader: FactsReader | undefined;
      let abandoned = false;
      const result = (async (): Promise<ContextRun> => {
        const connection = await connect({ ...command, context }, share, kubeconfigOnce);
        if (abandoned) {
          connection.dispose();
          return { context, trouble: 'timed out', message: 'given up' };
        }
        reader = liveFactsReader(connection);
        try {
          const outcome = await checkWith(command, files, stdin, reader, connection, undefined, context, once);
          if (outcome.ok) return { context, outcome };
          if ('usage' in outcome) return { context, usage: outcome.usage };
          return {
            context,
            trouble: troubleOf(outcome.problem),
            message: describeProblem(outcome.problem, connection, command.verify),
          };
        } finally {
          reader.close();
        }
      })();
      return {
        result,
        abandon: () => {
          abandoned = true;
          reader?.close();
        },
      };
    },
  );
  return reportFleet(command, runs, files);
}

/** A fleet snapshot (snapshot with several contexts): each context read back from its own folder. */
async function checkFleetSnapshot(
  command: CheckCommand,
  dir: string,
  index: FleetSnapshotIndex,
  files: readonly string[],
  stdin: FileText | undefined,
): Promise<number> {
  const runs: ContextRun[] = [];
  const once = createCheckShare();
  for (const { context, directory } of index.contexts) {
    const loaded = loadSnapshot(path.join(dir, directory), command.namespace);
    if (!loaded.ok) {
      runs.push({ context, trouble: 'failed', message: loaded.message });
      continue;
    }
    try {
      const outcome = await checkWith(command, files, stdin, loaded.reader, undefined, undefined, context, once);
      runs.push(
        outcome.ok
          ? { context, outcome }
          : 'usage' in outcome
            ? { context, usage: outcome.usage }
            : { context, trouble: troubleOf(outcome.problem), message: outcome.problem.message },
      );
    } finally {
      loaded.reader.close();
    }
  }
  return reportFleet(command, runs, files);
}

/**
 * Prints the fleet's one report. A usage problem (the same in every context) is one line, exit 2;
 * so is a fleet where no context could be judged at all. Otherwise a context that gave nothing is
 * listed as not judged (exit 1 at least), the others' findings beside it.
 */
async function reportFleet(
  command: CheckCommand,
  runs: readonly ContextRun[],
  files: readonly string[],
): Promise<number> {
  const usage = runs.find((r): r is Extract<ContextRun, { usage: string }> => 'usage' in r);
  if (usage) return fail(usage.usage);
  const report = fleetReport(
    runs,
    files.map((f) => displayPath(f)),
  );
  if (!report) {
    for (const r of runs) if ('trouble' in r) fail(`[${r.context}] ${r.message}`);
    return 2;
  }
  await write(process.stdout, render(report, command));
  return exitCodeFor(summarize(report));
}

async function snapshot(command: SnapshotCommand): Promise<number> {
  if (command.fleet) return snapshotFleet(command, command.fleet);
  const connection = await connect(command);
  try {
    const result = await takeSnapshot(connection, { outDir: command.outDir, selectors: command.selectors });
    if (!result.ok)
      return 'usage' in result ? fail(result.usage) : fail(describeProblem(result.problem, connection, false));
    for (const note of result.notes)
      process.stderr.write(`${printableLine(redactText(`${programName}: note: ${note}`))}\n`);
    await write(
      process.stdout,
      `${printableLine(`saved ${result.saved} live object${result.saved === 1 ? '' : 's'}, ${result.absent} absent, ${result.documents} OpenAPI document${result.documents === 1 ? '' : 's'} to ${command.outDir}`)}\n`,
    );
    return 0;
  } finally {
    connection.dispose();
  }
}

/** One snapshot per context, in DIR/context-N, named by DIR/fleet.json; each taken as one context's is. */
async function snapshotFleet(command: SnapshotCommand, fleet: FleetOptions): Promise<number> {
  const kubeconfigOnce = new KubeconfigOnce(command.kubeconfig ?? '');
  const kubeconfig = await kubeconfigOnce.summary();
  if (!kubeconfig.ok) return fail(`kubeconfig: ${kubeconfig.problem.message}`);
  const resolved = resolveContexts(kubeconfig.value, fleet.names, fleet.globs);
  if (!resolved.ok) return fail(resolved.message);
  const prepared = prepareFleetDirectory(command.outDir);
  if (!prepared.ok) return fail(prepared.message);
  const index = fleetSnapshotFolders(resolved.contexts);
  const share = createClusterShare();
  let failed = 0;
  for (const { context, directory } of index.contexts) {
    const connection = await connect({ ...command, context }, share, kubeconfigOnce);
    try {
      const outDir = path.join(command.outDir, directory);
      const result = await takeSnapshot(connection, { outDir, selectors: command.selectors });
      if (!result.ok) {
        failed++;
        fail(`[${context}] ${'usage' in result ? result.usage : describeProblem(result.problem, connection, false)}`);
        continue;
      }
      for (const note of result.notes)
        process.stderr.write(`${printableLine(redactText(`${programName}: note: [${context}] ${note}`))}\n`);
      await write(
        process.stdout,
        `${printableLine(`[${context}] saved ${result.saved} live object${result.saved === 1 ? '' : 's'}, ${result.absent} absent, ${result.documents} OpenAPI document${result.documents === 1 ? '' : 's'} to ${outDir}`)}\n`,
      );
    } finally {
      connection.dispose();
    }
  }
  // The index is written last and only when every context was saved: a half fleet is not read back as whole.
  if (failed > 0) return 2;
  const written = writeFleetIndex(command.outDir, index);
  if (!written.ok) return fail(written.message);
  return 0;
}

function connect(
  options: ClusterOptions,
  share?: ClusterShare,
  kubeconfig?: KubeconfigOnce,
): Promise<ClusterConnection> {
  return createClusterConnection(
    { kubeconfig: options.kubeconfig ?? '', context: options.context ?? '', namespace: options.namespace ?? '' },
    // One judgement of what the cluster answers now: the lists are not kept current by watches.
    {
      userAgent: `${programName}/${toolVersion()} (check)`,
      liveObjects: { follow: false },
      diskCache: true,
      ...(share ? { share } : {}),
      ...(kubeconfig ? { kubeconfig } : {}),
    },
  );
}

function render(
  report: CheckReport,
  { format, minimumSeverity }: Pick<CheckCommand, 'format' | 'minimumSeverity'>,
): string {
  switch (format) {
    case 'text':
      // A CI log gets the findings that need a look and the summary; `--verbose` the rest.
      return formatText(report, {
        minimumSeverity,
        shownWith: { information: '--verbose', warning: '--min-severity warning' },
      });
    case 'json':
      return formatJson(report);
    case 'sarif':
      return formatSarif(report, { toolVersion: toolVersion(), baseUri: `${pathToFileURL(process.cwd()).href}/` });
    case 'github':
      return formatGithub(report);
    case 'gitlab':
      return formatGitlab(report);
  }
}

/** One line a user can act on: what failed, against which cluster, and the server's words. */
export function describeProblem(
  problem: ClusterProblem,
  connection: ClusterConnection | undefined,
  verifying: boolean,
): string {
  const context = connection?.context?.name ?? connection?.settings.context ?? '';
  const server = connection?.context?.server;
  const where = `${server ? `the cluster at ${server}` : 'the cluster'}${context ? ` (context ${context})` : ''}`;
  const detail = problem.message.replace(/\s+/g, ' ').trim();
  switch (problem.kind) {
    case 'unreachable':
      return `cannot reach ${where}: ${detail}`;
    case 'unauthenticated':
      // No credential to send (a plugin that failed, a key that cannot be loaded) is not a refusal.
      return problem.httpStatus === undefined
        ? `cannot authenticate to ${where}: ${detail}`
        : `${where} does not accept the credentials: ${detail}`;
    case 'forbidden': {
      const needs = verifying
        ? "get on the manifests' kinds (list where many objects of a kind are read), and patch (or create) for the --verify dry runs"
        : "get on the manifests' kinds (list where many objects of a kind are read)";
      return `${where} refuses: ${detail} (the check needs ${needs})`;
    }
    case 'configuration':
      return `kubeconfig: ${detail}`;
    case 'invalidName':
      // Nothing was sent: the manifest names something the API server would refuse.
      return detail;
    default:
      return `${where} answered: ${detail}`;
  }
}

/**
 * stderr ends up in CI logs: nothing a cluster or a credential plugin said goes there unredacted,
 * and a file or object name it quotes stays on the one line (a CI runner reads a line of its own
 * that starts with `::` as a workflow command).
 */
function fail(message: string): number {
  process.stderr.write(`${printableLine(redactText(`${programName}: ${message}`))}\n`);
  return 2;
}

/** Resolves once the text is written, or once the reader has gone (the stream was closed: see below). */
function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed) return resolve();
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    if (stream.write(text)) resolve();
    else {
      stream.once('drain', done);
      stream.once('close', done);
    }
  });
}

// A reader that stops early (`check ... | head`) closes the pipe: the rest of the output is not
// wanted, which is no internal error. The command ends as it would have, with its own exit code.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.stdout.destroy();
});

let cachedVersion: string | undefined;
/** The version in package.json, found from dist/cli.js or from the sources run by tsx. */
function toolVersion(): string {
  if (cachedVersion) return cachedVersion;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === programName && pkg.version) return (cachedVersion = pkg.version);
    }
    if (path.dirname(dir) === dir) return (cachedVersion = '0.0.0');
  }
}

main(process.argv.slice(2)).then(
  // Exit explicitly: watches opened by the cluster layer must not keep the process alive.
  (code) => process.exit(code),
  (error: unknown) => {
    // The message may quote a file name: one line of its own, then the stack's frames.
    const head = `${programName}: internal error: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
    const frames = error instanceof Error ? (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)) : [];
    process.stderr.write(`${[head, ...frames].map((line) => printableLine(redactText(line))).join('\n')}\n`);
    process.exit(2);
  },
);
