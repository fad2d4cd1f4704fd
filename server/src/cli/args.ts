// The command line, read into plain records. Anything the user typed that cannot work is a usage
// error with one sentence saying why (exit 2), before any file or cluster is touched.
import { parseArgs } from 'node:util';
import { severities, type Severity } from '../core/findings';
import { applierSettings, applyModes, defaultSettings, type ApplierSetting, type ApplyMode } from '../protocol';

export type OutputFormat = 'text' | 'json' | 'sarif' | 'github' | 'gitlab';
const formats: readonly OutputFormat[] = ['text', 'json', 'sarif', 'github', 'gitlab'];

export interface ClusterOptions {
  kubeconfig?: string;
  /** The one context, when one is named. */
  context?: string;
  namespace?: string;
  /**
   * Several contexts at once (cli/fleet.ts): every `--context` when there are two or more, and the
   * `--contexts` globs. Absent for a check of one context.
   */
  fleet?: FleetOptions;
}

export interface FleetOptions {
  names: string[];
  globs: string[];
  /**
   * `--parallel`: contexts checked at once (default 16: a context mostly waits on its cluster, so
   * contexts that start together overlap their round trips; one started later adds its own).
   */
  parallel: number;
  /** `--context-timeout`: seconds one context may take (default 60). */
  timeoutSeconds: number;
}

export interface CheckCommand extends ClusterOptions {
  command: 'check';
  targets: string[];
  mode: ApplyMode;
  fieldManager: string;
  /**
   * `--applier`: who sends the manifests (default kubectl); a GitOps controller's forced request is
   * predicted instead of kubectl's; `auto` detects it from the controllers' objects in the cluster.
   */
  applier: ApplierSetting;
  format: OutputFormat;
  /**
   * The least severe finding the text output prints (default warning: a clean run is one summary
   * line). JSON and SARIF always carry every finding; exit codes never depend on it.
   */
  minimumSeverity: Severity;
  verify: boolean;
  snapshot?: string;
  /** `-k DIR`: kustomizations to build and check, as `kubectl apply -k DIR` would send them. */
  kustomizations: string[];
  /** `--kustomize-binary`: the kustomize to run (default: kustomize on PATH, then kubectl kustomize). */
  kustomizeBinary?: string;
  /** `--helm CHART`: charts to render with helm template and check as Helm would send them. */
  charts: string[];
  /** `--values FILE`: the release's values files, in order (the last wins). */
  valuesFiles: string[];
  /** `--release NAME` (default: the chart's name). */
  release?: string;
  /** `--helm-binary`: the helm to run (default: helm on PATH). */
  helmBinary?: string;
  /** `--search-root`: where the overlays that use a named file are looked for (default: the current directory). */
  searchRoot?: string;
}

export interface SnapshotCommand extends ClusterOptions {
  command: 'snapshot';
  outDir: string;
  selectors: string[];
}

export type Command =
  CheckCommand | SnapshotCommand | { command: 'help'; topic?: 'check' | 'snapshot' } | { command: 'version' };

export type ParsedCommand = { ok: true; command: Command } | { ok: false; message: string };

export const usage = `Usage:
  kube-conflict-hints check [options] <file|directory|->...
  kube-conflict-hints snapshot --out <dir> [options] <file|directory|kind/name>...
  kube-conflict-hints lsp [--stdio]

check: predicts, for every Kubernetes object in the manifests, the 409 Conflict answers the API
server would give (Server-Side Apply field conflicts, AlreadyExists, stale resourceVersion/uid),
from reads alone. Files are read as \`kubectl apply -R -f\` reads them: directories are searched
for *.yaml, *.yml and *.json (links to files are followed; hidden folders and node_modules are
skipped); a file that is not text, not a regular file, or over 32 MiB is refused (exit 2).
\`-\` reads the standard input, as \`kubectl apply -f -\` does (findings name it <stdin>). As in
kubectl, a text that starts with \`{\` is a stream of JSON objects (one or many, as \`jq '.items[]'\`
prints them, a \`List\` among them); any other text is a YAML stream of \`---\`-separated documents.
The summary counts the objects judged; under it, each object or input that was not judged is
listed with its place and why (a chart or overlay that does not render, helm or kustomize
missing, text kubectl cannot read, a kind the cluster does not serve, an object a snapshot lacks).

  --mode <serverSide|clientSide|create>  how the manifests will be sent (default serverSide:
                                         kubectl apply --server-side; clientSide: kubectl apply;
                                         create: kubectl create)
  --field-manager <name>                 the field manager of the apply (default kubectl)
  --applier <name>                       who sends the manifests (default kubectl): kubectl (as
                                         --mode and --field-manager say), helm (Helm 4, as helm),
                                         argocd (Argo CD's client-side sync), argocd-ssa (Argo CD
                                         with ServerSideApply=true), flux (Flux
                                         kustomize-controller), flux-helm (Flux helm-controller),
                                         or auto: the Flux Kustomization or Argo CD Application
                                         whose source path holds the file, when its repository is
                                         the file's (its git remote), else kubectl. A GitOps
                                         controller forces its apply: the findings say which
                                         fields it takes from whom, and the fights it starts
  --format <text|json|sarif|github|gitlab>
                                         output (default text); json is described by
                                         schemas/findings.schema.json, sarif is SARIF 2.1.0,
                                         github annotates a pull request (workflow commands),
                                         gitlab is a Code Quality report
  --min-severity <error|warning|information>
                                         the least severe finding the text output prints
                                         (default warning; the summary line counts them all;
                                         json and sarif always hold every finding)
  --verbose                              print information findings too (objects that exist
                                         and who manages them):
                                         --min-severity information
  --verify                               also send each manifest as a dry run (dryRun=All: nothing
                                         is stored) and show where the server's answer differs
  -k, --kustomize <dir>                  build the kustomization in <dir> and check what it renders,
                                         as kubectl apply -k would send it; findings land on the
                                         patch, resource file or kustomization entry that sets the
                                         field. Kustomizations and the files they use that are named
                                         as files are checked through the overlays that use them
  --kustomize-binary <file>              the kustomize to run (default: kustomize on PATH, then
                                         kubectl kustomize)
  --helm <chart>                         render the chart with helm template and check what Helm
                                         would send: Helm 4 applies server-side, Helm 3 updates,
                                         both as the field manager helm (helm version tells);
                                         findings land on the template line that writes the field
                                         and on the values line it reads
  --values <file>                        a values file of the release (repeatable, the last wins;
                                         default: the chart's values.yaml alone)
  --release <name>                       the release name (default: the chart's name); the release
                                         namespace is -n, else the context's namespace
  --helm-binary <file>                   the helm to run (default: helm on PATH)
  --search-root <dir>                    where to look for the overlays that use a named base or
                                         patch (default: the current directory; 8 folders deep,
                                         2000 folders at most, hidden folders skipped)
  --snapshot <dir>                       read the cluster from a snapshot directory; no cluster
  --kubeconfig <file>                    default: KUBECONFIG, then ~/.kube/config
  --context <name>                       default: the kubeconfig's current context; give it
                                         again for several contexts side by side: each
                                         finding names its context, and a table shows each
                                         object in each context
  --contexts <glob>                      every kubeconfig context the glob matches (prod-*),
                                         repeatable, with --context or alone
  --parallel <n>                         contexts checked at once (default 16)
  --context-timeout <seconds>            one context's time limit: a context that gives no
                                         answer by then is reported as timed out, not judged,
                                         and the others are not held back (default 60)
  -n, --namespace <name>                 for manifests without one (default: the context's, then default)

snapshot: saves the live objects the manifests name (or kind/name selectors), with managedFields,
and the OpenAPI v3 documents and discovery they need, for check --snapshot. A directory of
\`kubectl get -o yaml --show-managed-fields\` output also works as a snapshot.

  --out <dir>                            the snapshot directory (created; an earlier snapshot
                                         there is replaced)
  --kubeconfig, --context, --contexts, -n/--namespace as for check; with several contexts, one
                                         snapshot per context in one directory, which
                                         check --snapshot reads back as several contexts

lsp: the language server, for editors (kube-conflict-hints lsp --help).

Exit codes: 0 every object judged and nothing found (information alone is nothing), 1 errors or
warnings found, or something not judged (listed under the summary),
2 usage error or cluster problem (unreachable, unauthenticated, forbidden: nothing is judged).
`;

export function parseCommandLine(argv: readonly string[]): ParsedCommand {
  const [verb, ...rest] = argv;
  // No command at all is a usage problem (exit 2, as the exit codes say), not a request for help.
  if (verb === undefined) return { ok: false, message: 'no command: use check, snapshot or lsp (see --help)' };
  if (verb === '--help' || verb === '-h' || verb === 'help') return { ok: true, command: { command: 'help' } };
  if (verb === '--version' || verb === '-v') return { ok: true, command: { command: 'version' } };
  if (verb !== 'check' && verb !== 'snapshot') {
    return { ok: false, message: `unknown command ${JSON.stringify(verb)}: use check, snapshot or lsp (see --help)` };
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: [...rest],
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        kubeconfig: { type: 'string' },
        context: { type: 'string', multiple: true },
        contexts: { type: 'string', multiple: true },
        parallel: { type: 'string' },
        'context-timeout': { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        'field-manager': { type: 'string' },
        applier: { type: 'string' },
        mode: { type: 'string' },
        format: { type: 'string', short: 'o' },
        'min-severity': { type: 'string' },
        verbose: { type: 'boolean' },
        verify: { type: 'boolean' },
        snapshot: { type: 'string' },
        out: { type: 'string' },
        kustomize: { type: 'string', short: 'k', multiple: true },
        'kustomize-binary': { type: 'string' },
        helm: { type: 'string', multiple: true },
        values: { type: 'string', short: 'f', multiple: true },
        release: { type: 'string' },
        'helm-binary': { type: 'string' },
        'search-root': { type: 'string' },
      },
    });
  } catch (e) {
    // node's messages name the option: "Unknown option '--foo'", "Option '--mode <value>' argument missing".
    return {
      ok: false,
      message: `${(e as Error).message.replace(/\. To specify a positional argument.*$/s, '')} (see --help)`,
    };
  }
  const v = parsed.values;
  if (v.help) return { ok: true, command: { command: 'help', topic: verb } };
  const names = v.context ?? [];
  const globs = v.contexts ?? [];
  if ([...names, ...globs].some((c) => c.trim() === '')) return { ok: false, message: '--context needs a value' };
  const fleet = fleetOptions(names, globs, v.parallel, v['context-timeout']);
  if (!fleet.ok) return fleet;
  const cluster: ClusterOptions = {
    ...(v.kubeconfig !== undefined ? { kubeconfig: v.kubeconfig } : {}),
    ...(names.length === 1 && globs.length === 0 ? { context: names[0] } : {}),
    ...(v.namespace !== undefined ? { namespace: v.namespace } : {}),
    ...(fleet.fleet ? { fleet: fleet.fleet } : {}),
  };
  for (const [name, value] of Object.entries({
    kubeconfig: v.kubeconfig,
    namespace: v.namespace,
    'field-manager': v['field-manager'],
    out: v.out,
    snapshot: v.snapshot,
  })) {
    if (value !== undefined && value.trim() === '') return { ok: false, message: `--${name} needs a value` };
  }

  if (verb === 'snapshot') {
    for (const option of [
      'field-manager',
      'applier',
      'mode',
      'format',
      'verify',
      'snapshot',
      'min-severity',
      'verbose',
      'kustomize',
      'kustomize-binary',
      'search-root',
      'helm',
      'values',
      'release',
      'helm-binary',
    ] as const) {
      if (v[option] !== undefined) return { ok: false, message: `--${option} is an option of check, not of snapshot` };
    }
    if (v.out === undefined) return { ok: false, message: 'snapshot needs --out <dir>' };
    if (parsed.positionals.length === 0)
      return { ok: false, message: 'snapshot needs manifests (files or directories) or kind/name selectors to save' };
    return { ok: true, command: { command: 'snapshot', outDir: v.out, selectors: parsed.positionals, ...cluster } };
  }

  if (v.out !== undefined)
    return { ok: false, message: '--out is an option of snapshot; check reads a snapshot with --snapshot <dir>' };
  const mode = v.mode ?? defaultSettings.applyMode;
  if (!applyModes.includes(mode as ApplyMode))
    return { ok: false, message: `--mode must be one of ${applyModes.join(', ')} (got ${JSON.stringify(mode)})` };
  const format = v.format ?? 'text';
  if (!formats.includes(format as OutputFormat))
    return { ok: false, message: `--format must be one of ${formats.join(', ')} (got ${JSON.stringify(format)})` };
  const minimum = v['min-severity'] ?? (v.verbose ? 'information' : 'warning');
  if (!severities.includes(minimum as Severity))
    return {
      ok: false,
      message: `--min-severity must be one of ${severities.join(', ')} (got ${JSON.stringify(minimum)})`,
    };
  if (v.verbose && minimum !== 'information')
    return {
      ok: false,
      message: `--verbose prints information findings, --min-severity ${minimum} leaves them out: use one of them`,
    };
  if (v.snapshot !== undefined) {
    if (v.verify) return { ok: false, message: '--verify asks the cluster, --snapshot reads none: use one of them' };
    if (v.kubeconfig !== undefined || names.length > 0 || globs.length > 0)
      return { ok: false, message: '--snapshot reads no cluster: --kubeconfig and --context do not apply' };
  }
  const applier = v.applier ?? 'kubectl';
  if (!applierSettings.includes(applier as ApplierSetting))
    return {
      ok: false,
      message: `--applier must be one of ${applierSettings.join(', ')} (got ${JSON.stringify(applier)})`,
    };
  if (applier !== 'kubectl' && applier !== 'auto') {
    for (const option of ['mode', 'field-manager'] as const) {
      if (v[option] !== undefined)
        return {
          ok: false,
          message: `--applier ${applier} sends the manifests its own way (its field manager and mode): --${option} goes with --applier kubectl`,
        };
    }
    if (v.verify)
      return {
        ok: false,
        message: `--verify sends your own apply as a dry run, not ${applier}'s request: use it with --applier kubectl`,
      };
  }
  if (applier === 'auto' && v.snapshot !== undefined)
    return {
      ok: false,
      message:
        '--applier auto reads the Kustomizations and Applications of a cluster; a snapshot holds none: name the applier',
    };
  if (v.verify && mode === 'clientSide')
    return { ok: false, message: '--verify confirms --mode serverSide or create (a dry-run update is not offered)' };
  if (v['kustomize-binary'] !== undefined && v['kustomize-binary'].trim() === '')
    return { ok: false, message: '--kustomize-binary needs a value' };
  if (v['search-root'] !== undefined && v['search-root'].trim() === '')
    return { ok: false, message: '--search-root needs a folder' };
  if ((v.kustomize ?? []).some((d) => d.trim() === ''))
    return { ok: false, message: '-k needs a kustomization folder' };
  for (const option of ['helm-binary', 'release'] as const) {
    if (v[option] !== undefined && v[option].trim() === '') return { ok: false, message: `--${option} needs a value` };
  }
  if ([...(v.helm ?? []), ...(v.values ?? [])].some((d) => d.trim() === ''))
    return { ok: false, message: '--helm and --values need a path' };
  if ((v.helm ?? []).length === 0) {
    for (const option of ['values', 'release', 'helm-binary'] as const) {
      if (v[option] !== undefined) return { ok: false, message: `--${option} goes with --helm <chart>` };
    }
  }
  if (parsed.positionals.length === 0 && (v.kustomize ?? []).length === 0 && (v.helm ?? []).length === 0)
    return {
      ok: false,
      message: 'check needs manifests: name files or directories (e.g. `kube-conflict-hints check k8s/`)',
    };
  return {
    ok: true,
    command: {
      command: 'check',
      targets: parsed.positionals,
      mode: applier === 'helm' ? 'serverSide' : (mode as ApplyMode),
      fieldManager: applier === 'helm' ? 'helm' : (v['field-manager'] ?? defaultSettings.fieldManager),
      applier: applier as ApplierSetting,
      format: format as OutputFormat,
      minimumSeverity: minimum as Severity,
      verify: v.verify === true,
      ...(v.snapshot !== undefined ? { snapshot: v.snapshot } : {}),
      kustomizations: v.kustomize ?? [],
      ...(v['kustomize-binary'] !== undefined ? { kustomizeBinary: v['kustomize-binary'] } : {}),
      charts: v.helm ?? [],
      valuesFiles: v.values ?? [],
      ...(v.release !== undefined ? { release: v.release } : {}),
      ...(v['helm-binary'] !== undefined ? { helmBinary: v['helm-binary'] } : {}),
      ...(v['search-root'] !== undefined ? { searchRoot: v['search-root'] } : {}),
      ...cluster,
    },
  };
}

/** Contexts checked at once unless `--parallel` says otherwise. */
export const defaultParallel = 16;

/** `--context` twice or more, or `--contexts`: a fleet check, with its limits. */
function fleetOptions(
  names: readonly string[],
  globs: readonly string[],
  parallel: string | undefined,
  timeout: string | undefined,
): { ok: true; fleet?: FleetOptions } | { ok: false; message: string } {
  const several = names.length > 1 || globs.length > 0;
  if (!several) {
    if (parallel !== undefined || timeout !== undefined)
      return {
        ok: false,
        message: '--parallel and --context-timeout go with several contexts (--context twice, or --contexts)',
      };
    return { ok: true };
  }
  const count = (text: string | undefined, fallback: number, name: string, max: number) => {
    if (text === undefined) return fallback;
    return /^[1-9][0-9]*$/.test(text.trim()) && Number(text) <= max
      ? Number(text)
      : `--${name} must be a whole number from 1 to ${max} (got ${JSON.stringify(text)})`;
  };
  const p = count(parallel, defaultParallel, 'parallel', 256);
  if (typeof p === 'string') return { ok: false, message: p };
  const t = count(timeout, 60, 'context-timeout', 3600);
  if (typeof t === 'string') return { ok: false, message: t };
  return { ok: true, fleet: { names: [...names], globs: [...globs], parallel: p, timeoutSeconds: t } };
}
