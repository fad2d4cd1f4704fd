// Plain-data contract between the VS Code client and the language server: settings, the custom
// messages (each declared once with its params and result) and the typed helpers that send and
// answer them. It imports types alone (erased when compiled), so both sides (and the CLI) can
// depend on it without loading anything of the server.

import type { Severity } from './core/findings';
import type { ApplyMode } from './core/ssa/predict';
import type { ApplierSetting } from './core/gitops/model';

// The engine's own list of modes, declared once there: a mode it does not predict cannot be a setting.
export type { ApplyMode };
export const applyModes: readonly ApplyMode[] = ['serverSide', 'clientSide', 'create'];

/** Who sends the manifests (core/gitops/model.ts names them), or `auto`: detected from the cluster. */
export type { ApplierSetting };
/** Every applier once (a name added in core/gitops/model.ts must be added here, or this does not compile). */
const applierWords: Readonly<Record<ApplierSetting, true>> = {
  auto: true,
  kubectl: true,
  helm: true,
  argocd: true,
  'argocd-ssa': true,
  flux: true,
  'flux-helm': true,
};
export const applierSettings = Object.keys(applierWords) as readonly ApplierSetting[];

/**
 * Who reports YAML syntax problems (and duplicate keys): `auto` leaves them to another language
 * service of the document's language when the editor has one (Red Hat's YAML extension, the
 * built-in JSON one), `always` reports them here too, `never` leaves them to others.
 */
export type SyntaxErrorsMode = 'auto' | 'always' | 'never';
export const syntaxErrorsModes: readonly SyntaxErrorsMode[] = ['auto', 'always', 'never'];

/**
 * The settings' section: what the server asks for with `workspace/configuration` and the client
 * answers (and pushes) for. The setting ids are `kubeConflictHints.<key of Settings>`.
 */
export const settingsSection = 'kubeConflictHints';

/** The `kubeConflictHints.*` settings, read per document and never kept in server globals. */
export interface Settings {
  fieldManager: string;
  applyMode: ApplyMode;
  /**
   * Who sends the manifests: `kubectl` (in applyMode, as fieldManager), `helm`, or a GitOps
   * controller (`argocd`, `argocd-ssa`, `flux`, `flux-helm`), whose forced request is predicted;
   * `auto`: the controller whose object's source path holds the file, else kubectl.
   */
  applier: ApplierSetting;
  kubeconfig: string;
  context: string;
  /**
   * Several contexts at once (names, or globs over the kubeconfig's contexts: `prod-*`): each open
   * manifest is judged in each, side by side. Fewer than two: `context` alone, as ever.
   */
  contexts: readonly string[];
  namespace: string;
  /** A summary line above each resource. */
  codeLens: boolean;
  /** Confirm predictions with a dry-run apply whenever a file is saved. */
  verifyOnSave: boolean;
  /** Inlay hints naming the manager of each line someone else owns, like a blame view. */
  ownershipHints: boolean;
  syntaxErrors: SyntaxErrorsMode;
  /** Per finding code: another severity, or `off` to hide it (`{"would-delete": "off"}`). */
  severity: Readonly<Record<string, SeverityOverride>>;
  /**
   * The `helm` binary that renders charts; empty: `helm` on PATH. A program: the editor takes it
   * from the user's own settings only (machine scope), never from a workspace's.
   */
  helmPath: string;
  /** The `kustomize` binary; empty: `kustomize` on PATH, then `kubectl kustomize`. Machine scope, as helmPath. */
  kustomizePath: string;
  /** The release name a chart is rendered as; empty: the chart's name. */
  helmRelease: string;
  /** Values files (relative to the chart folder) given to `helm template` in order; none: the chart's values.yaml alone. */
  helmValuesFiles: readonly string[];
  /**
   * The release chosen for a chart installed as several (*Choose the Helm release…*): chart folder
   * relative to the workspace folder (`.` for the folder itself) → `NAMESPACE/RELEASE`. Used only
   * while that release is one the cluster says holds the chart.
   */
  helmReleases: Readonly<Record<string, string>>;
  /**
   * The overlays that count, as folders relative to the workspace folder (`*`, `**`, `?` allowed);
   * empty: every overlay of the folder that uses the file. Each entry is checked (inside the
   * folder, no `..` out of it) before it means anything.
   */
  kustomizeOverlays: readonly string[];
}

export type SeverityOverride = Severity | 'off';
/** The words a severity setting takes: the catalogue's severities (one added there must be added here, or this does not compile), and `off`. */
const severityOverrides: Readonly<Record<SeverityOverride, true>> = {
  error: true,
  warning: true,
  information: true,
  off: true,
};

export const defaultSettings: Settings = {
  fieldManager: 'kubectl',
  applyMode: 'serverSide',
  applier: 'auto',
  kubeconfig: '',
  context: '',
  contexts: [],
  namespace: '',
  codeLens: true,
  verifyOnSave: false,
  ownershipHints: true,
  syntaxErrors: 'auto',
  severity: {},
  helmPath: '',
  kustomizePath: '',
  helmRelease: '',
  helmValuesFiles: [],
  helmReleases: {},
  kustomizeOverlays: [],
};

/** Turns whatever the editor sent (any shape, any age of settings file) into valid settings. */
export function sanitizeSettings(raw: unknown): Settings {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const str = (v: unknown, fallback: string) => (typeof v === 'string' ? v.trim() : fallback);
  const mode = applyModes.includes(r.applyMode as ApplyMode) ? (r.applyMode as ApplyMode) : defaultSettings.applyMode;
  return {
    fieldManager: str(r.fieldManager, '') || defaultSettings.fieldManager,
    applyMode: mode,
    applier: applierSettings.includes(r.applier as ApplierSetting)
      ? (r.applier as ApplierSetting)
      : defaultSettings.applier,
    kubeconfig: str(r.kubeconfig, ''),
    context: str(r.context, ''),
    contexts: stringList(r.contexts),
    namespace: str(r.namespace, ''),
    codeLens: typeof r.codeLens === 'boolean' ? r.codeLens : defaultSettings.codeLens,
    verifyOnSave: typeof r.verifyOnSave === 'boolean' ? r.verifyOnSave : defaultSettings.verifyOnSave,
    ownershipHints: typeof r.ownershipHints === 'boolean' ? r.ownershipHints : defaultSettings.ownershipHints,
    syntaxErrors: syntaxErrorsModes.includes(r.syntaxErrors as SyntaxErrorsMode)
      ? (r.syntaxErrors as SyntaxErrorsMode)
      : defaultSettings.syntaxErrors,
    severity: sanitizeSeverity(r.severity),
    helmPath: str(r.helmPath, ''),
    kustomizePath: str(r.kustomizePath, ''),
    helmRelease: str(r.helmRelease, ''),
    helmValuesFiles: Array.isArray(r.helmValuesFiles)
      ? r.helmValuesFiles
          .filter((f): f is string => typeof f === 'string' && f.trim() !== '')
          .map((f) => f.trim())
          .slice(0, 32)
      : [],
    helmReleases: sanitizeReleases(r.helmReleases),
    kustomizeOverlays: stringList(r.kustomizeOverlays),
  };
}

/** `chart folder: NAMESPACE/RELEASE` pairs whose names the API server and Helm would accept; anything else is dropped. */
function sanitizeReleases(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return out;
  for (const [chart, place] of Object.entries(raw as Record<string, unknown>).slice(0, 32)) {
    const folder = chart.trim().replace(/\/+$/, '') || '.';
    if (folder.length > 512 || folder.startsWith('/') || folder.split('/').includes('..')) continue;
    if (
      typeof place === 'string' &&
      /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/[a-z0-9]([-a-z0-9.]{0,51}[a-z0-9])?$/.test(place.trim())
    )
      out[folder] = place.trim();
  }
  return out;
}

/** A list of non-empty strings, trimmed, at most 32 (what the settings hold are a few paths). */
function stringList(raw: unknown): string[] {
  return Array.isArray(raw)
    ? raw
        .filter((f): f is string => typeof f === 'string' && f.trim() !== '')
        .map((f) => f.trim())
        .slice(0, 32)
    : [];
}

/** Only `code: level` pairs with a code-like key and a known level; anything else is dropped. */
function sanitizeSeverity(raw: unknown): Record<string, SeverityOverride> {
  const out: Record<string, SeverityOverride> = {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return out;
  for (const [code, level] of Object.entries(raw as Record<string, unknown>)) {
    if (/^[a-z][a-z-]{0,63}$/.test(code) && typeof level === 'string' && Object.hasOwn(severityOverrides, level))
      out[code] = level as SeverityOverride;
  }
  return out;
}

/**
 * The Node options an editor's client starts the language server process with. A young generation
 * of 4 MiB semi-spaces (V8's default on 64-bit machines is 16 MiB): a server that judges a file of
 * 2,000 objects peaks about 20 MB lower (docs/performance.md), for scavenges that are more
 * frequent and each shorter. One thread for V8's work beside the server's own (its collector's
 * concurrent marking, its optimizing compiler; Node's default is four): the server shares the
 * machine with the editor, and with one the same judgement peaks about 5 MB lower and answered
 * sooner here (docs/performance.md). The VS Code client passes them; the test client that plays
 * VS Code does too.
 */
export const serverExecArgv: readonly string[] = ['--max-semi-space-size=4', '--v8-pool-size=1'];

/**
 * What the editor's client adds to the language server process's environment. Two `malloc` arenas
 * at most (glibc makes one per thread that allocates, up to eight per core: V8's compiler and
 * collector threads each held memory freed long before): a server that judges a file of 2,000
 * objects peaks about 5 MB lower (docs/performance.md). Other C libraries ignore it.
 */
export const serverEnv: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * Sent by the client in initializationOptions. Trust fails closed: a client that sends none, or
 * anything but `clusterAccess: true`, gets no cluster access (kubeconfig exec plugins run
 * programs, and a workspace's settings can name the kubeconfig).
 */
export interface InitializationOptions {
  /** True only in a trusted workspace; otherwise the server contacts no cluster and reads no kubeconfig for it. */
  clusterAccess: boolean;
  /** The other syntax-reporting language services the editor has, at start (see SyntaxServices). */
  syntaxServices?: SyntaxServices;
}

/**
 * What a client's initializationOptions say of trust. Trust is a boolean or nothing: `true` and
 * `false` are the editor's word; no `clusterAccess` at all (or no options) is no word, which only
 * the standalone server, whose user chose to run it, reads as access; anything else (`"false"`,
 * `null`, `0`: an editor configuration that meant false) is `garbled`, no access and no word.
 */
export type StatedTrust = 'trusted' | 'untrusted' | 'unstated' | 'garbled';

export function statedTrust(initializationOptions: unknown): StatedTrust {
  if (
    typeof initializationOptions !== 'object' ||
    initializationOptions === null ||
    !('clusterAccess' in initializationOptions)
  )
    return 'unstated';
  const { clusterAccess } = initializationOptions;
  return clusterAccess === true ? 'trusted' : clusterAccess === false ? 'untrusted' : 'garbled';
}

/**
 * Language id → the extension that already reports syntax errors for documents of that language
 * (e.g. `{ yaml: 'redhat.vscode-yaml', json: 'vscode.json-language-features' }`). Sent at start
 * and again (`notifications.syntaxServices`) when extensions come or go.
 */
export type SyntaxServices = Record<string, string>;

/**
 * `idle`: cluster access is allowed but nothing asked for it yet (no Kubernetes manifest open, no
 * command): no kubeconfig read, no request sent.
 */
export type ClusterHealth =
  | 'connected'
  | 'unreachable'
  | 'unauthenticated'
  | 'forbidden'
  | 'throttled'
  | 'failing'
  | 'disabled'
  | 'unknown'
  | 'idle';

export interface StatusParams {
  health: ClusterHealth;
  context: string;
  server?: string;
  /** One sentence for the tooltip, e.g. the error of the last request. */
  detail: string;
  /**
   * With several contexts (`kubeConflictHints.contexts`): each one's health, in the setting's order;
   * `health` and `context` above then sum them up (the first in trouble, else connected).
   */
  contexts?: { context: string; health: ClusterHealth; server?: string; detail: string }[];
}

/**
 * Whether a document was judged: `judged`; `not-judged` (a part of it was not: a render failed, a
 * tool is missing, a document does not parse or is too large), with the reason; or `old` (judged on
 * facts of a cluster that no longer answers), with since when. Sent when it changes.
 */
export interface DocumentStateParams {
  uri: string;
  state: 'judged' | 'not-judged' | 'old';
  /** One sentence: the first reason. */
  reason?: string;
}

export interface RefreshParams {
  /** The active document, if any: its settings choose the cluster. */
  uri?: string;
  /** The user asked (a command): connect even when no Kubernetes manifest has been opened yet. */
  connect?: boolean;
}

export interface DocumentParams {
  uri: string;
  position?: { line: number; character: number };
}

export interface ForcePreviewParams extends DocumentParams {
  /** With several contexts (`kubeConflictHints.contexts`): the context whose cluster is forced; default the first that answers. */
  context?: string;
}

export interface FleetViewParams {
  /** Accepted for the command form (any document's); the view lists every open document. */
  uri?: string;
}

/**
 * The *Fleet* view: each open document judged in several contexts (`kubeConflictHints.contexts`),
 * its objects, and each context's cell for each (`conflict with kubectl-edit`, `exists`, `missing`,
 * `not judged`…), with the line the object starts on.
 */
export interface FleetViewResult {
  /** Every context any document was judged in, in the setting's order. */
  contexts: string[];
  documents: {
    uri: string;
    objects: { title: string; line: number; cells: { context: string; cell: string }[] }[];
  }[];
}

export interface ContextsParams {
  /** The active document, if any: its settings name the kubeconfig. */
  uri?: string;
}

export interface ContextsResult {
  current?: string;
  contexts: { name: string; cluster: string; namespace?: string; server?: string }[];
  problem?: string;
}

export interface OwnershipParams extends DocumentParams {
  /** Mark only the lines this field manager (by name) owns. */
  manager?: string;
}

export interface OwnershipResult {
  title: string;
  text: string;
  /** The legend: each managedFields entry once, with how many fields it owns. */
  managers: {
    manager: string;
    operation: 'Apply' | 'Update';
    subresource?: string;
    apiVersion: string;
    time?: string;
    fields: number;
  }[];
  /** The manager whose lines alone are marked, when filtered. */
  manager?: string;
}

export interface ReleasesResult {
  /** The workspace folder whose setting remembers the choice (a file URI). */
  folder?: string;
  /** The chart folder as the setting names it (relative to the workspace folder). */
  chart?: string;
  /** The releases the cluster holds the chart as; `value` is what the setting stores (`NAMESPACE/RELEASE`). */
  releases: { value: string; label: string; description: string; judged: boolean }[];
  /** Why there is nothing to choose from (not a chart's file, not rendered yet, one release only...). */
  problem?: string;
}

export interface OverlaysResult {
  /** The workspace folder whose setting chooses (a file URI); absent when the file is in none. */
  folder?: string;
  /** The overlays that use the file: as the setting names them (relative to the folder), as messages name them, and whether they count now. */
  overlays: { entry: string; label: string; counted: boolean }[];
  /**
   * What the folder's setting keeps besides the overlays picked here, so that a choice for this file
   * changes nothing for the others; the setting to write is these and the picked entries.
   */
  keep: string[];
  /** True while the setting is empty: every overlay counts, and picking them all changes nothing. */
  everyOverlay: boolean;
  /** Why there is nothing to choose from (not an overlay's file, no cluster access...). */
  problem?: string;
}

/**
 * What `kubectl apply --server-side --force-conflicts` would take from each other manager, and who
 * takes it back (core/findings/force-preview.ts computes it; the shape is repeated here because
 * this file imports no code of the server, and the server's handler is checked against it when it compiles).
 */
export interface ForcePreviewResult {
  /** `Force preview: Deployment shop/web` */
  title: string;
  /** The preview as text, for a read-only view or a client that shows command results as text. */
  text: string;
  /** The kubectl command to copy. */
  command: string;
  preview: {
    object: { apiVersion: string; kind: string; name: string; namespace?: string };
    fieldManager: string;
    losses: readonly {
      manager: string;
      operation: 'Apply' | 'Update';
      subresource?: string;
      apiVersion?: string;
      time?: string;
      fields: readonly { path: string; liveValue?: unknown; manifestValue?: unknown; withoutForce?: boolean }[];
      takesBack?: {
        certainty: 'will' | 'may';
        kind: 'autoscaler' | 'controller' | 'gitops';
        by: string;
        reason: string;
        paths: readonly string[];
      };
      note?: string;
    }[];
    uncertain: readonly {
      manager: string;
      operation: 'Apply' | 'Update';
      subresource?: string;
      paths: readonly string[];
    }[];
    stillRefused: readonly string[];
    command: string;
  };
}

export interface VerifyResult {
  /** Resources confirmed as predicted. */
  agreed: number;
  /** One line per resource where the server's answer differed from the prediction. */
  differences: string[];
  /** Resources that could not be verified, with why. */
  failed: string[];
}

// ---------------------------------------------------------------------------------------------
// The custom messages, each declared once: method name, params and result. Client and server
// send and answer them only through the typed helpers below, so a method spelled differently on
// one side, or a params or result shape that one side changes, is a compile error rather than a
// request the other side never answers. Descriptors are plain data (no JSON-RPC library here:
// the client and the command line import this file too).

/** A request the client sends and the server answers. */
export interface ClientRequest<P, R> {
  readonly method: string;
  /**
   * The same request as a `workspace/executeCommand` command, for editors that cannot send custom
   * requests (Helix, Zed, eglot, LSP4IJ). Its arguments are a document's (`{ uri, position? }`, or a
   * URI and a position), which is why every request's params must accept DocumentParams.
   */
  readonly command: string;
  /** Whether the command must name a document (follows from P: see CommandNeedsDocument). */
  readonly needsDocument: boolean;
  /** Never set: carries P and R to the helpers. */
  readonly types?: { params: P; result: R };
}

/** A notification, from the client to the server or the other way (the declaration says which). */
export interface Notification<P> {
  readonly method: string;
  /** Never set: carries P to the helpers. */
  readonly types?: { params: P };
}

/**
 * `true` when P requires a document's URI, `false` when it is optional, and `never` (no value
 * compiles) when P cannot take the DocumentParams that the command form of a request passes.
 */
type CommandNeedsDocument<P> = DocumentParams extends P ? ([P] extends [{ uri: string }] ? true : false) : never;

function clientRequest<P, R>(
  method: string,
  command: string,
  needsDocument: CommandNeedsDocument<P>,
): ClientRequest<P, R> {
  return { method, command, needsDocument };
}

function notification<P>(method: string): Notification<P> {
  return { method };
}

/** Client → server requests beyond LSP. */
export const requests = {
  /**
   * Drop the caches, rediscover and relist. Sent by a user's command (params: the active document,
   * if any) it also connects when no manifest has been opened yet.
   */
  refresh: clientRequest<RefreshParams | undefined, null>(
    'kubeConflictHints/refresh',
    'kube-conflict-hints.refresh',
    false,
  ),
  /** The contexts of the kubeconfig the document's settings select. */
  contexts: clientRequest<ContextsParams | undefined, ContextsResult>(
    'kubeConflictHints/contexts',
    'kube-conflict-hints.contexts',
    false,
  ),
  /** Field managers seen on the live objects of a document (for the picker). */
  managers: clientRequest<DocumentParams, string[]>('kubeConflictHints/managers', 'kube-conflict-hints.managers', true),
  /** The live object under the cursor as YAML annotated with each line's owners (or one manager's lines). */
  ownership: clientRequest<OwnershipParams, OwnershipResult | null>(
    'kubeConflictHints/ownership',
    'kube-conflict-hints.showOwnership',
    true,
  ),
  /** Confirm the document's predictions with dry-run applies. */
  verify: clientRequest<DocumentParams, VerifyResult>('kubeConflictHints/verify', 'kube-conflict-hints.verify', true),
  /**
   * What forcing the apply of the resource at the position would take from whom, and who takes it
   * back; null when no resource is there or its live object is not known. Sends only reads.
   */
  forcePreview: clientRequest<ForcePreviewParams, ForcePreviewResult | null>(
    'kubeConflictHints/forcePreview',
    'kube-conflict-hints.forcePreview',
    true,
  ),
  /** The Kustomize overlays that use the document, and which of them count (kustomizeOverlays). */
  overlays: clientRequest<DocumentParams, OverlaysResult>(
    'kubeConflictHints/overlays',
    'kube-conflict-hints.overlays',
    true,
  ),
  /** The open documents judged in several contexts, each object's cell per context (the Fleet view). */
  fleet: clientRequest<FleetViewParams | undefined, FleetViewResult>(
    'kubeConflictHints/fleet',
    'kube-conflict-hints.fleet',
    false,
  ),
  /** The Helm releases the cluster holds the document's chart as, and which is judged (helmReleases). */
  releases: clientRequest<DocumentParams, ReleasesResult>(
    'kubeConflictHints/releases',
    'kube-conflict-hints.releases',
    true,
  ),
} as const;

export const notifications = {
  /** Server → client: what the status bar shows. */
  status: notification<StatusParams>('kubeConflictHints/status'),
  /** Server → client: a document's state, shown in the status bar while it is the active one. */
  documentState: notification<DocumentStateParams>('kubeConflictHints/documentState'),
  /**
   * Server → client: the chart of this open document is installed as several releases and none is
   * chosen: ask the user once which (the client's *Choose the Helm release…*).
   */
  chooseRelease: notification<DocumentParams>('kubeConflictHints/chooseRelease'),
  /** Client → server: the syntax-reporting language services changed. */
  syntaxServices: notification<SyntaxServices>('kubeConflictHints/syntaxServices'),
} as const;

/*
 * The typed helpers. They take the part of a connection they use, which VS Code's LanguageClient,
 * vscode-languageserver's Connection and vscode-jsonrpc's MessageConnection all have. P is read from
 * the descriptor alone (NoInfer), so params, results or handlers of another shape do not widen it:
 * they fail to compile.
 */

export interface RequestSender {
  sendRequest(method: string, ...params: unknown[]): Promise<unknown>;
}
export interface NotificationSender {
  sendNotification(method: string, ...params: unknown[]): Promise<void> | void;
}
// The libraries' untyped handlers take `any`: what arrives on the wire is unchecked JSON.
export interface RequestReceiver {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
  onRequest(method: string, handler: (...params: any[]) => unknown): unknown;
}
export interface NotificationReceiver {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
  onNotification(method: string, handler: (...params: any[]) => void): unknown;
}

/** Answers a request: P and R come from the descriptor, never from the handler. */
export type RequestHandler<P, R> = (params: NoInfer<P>) => NoInfer<R> | Promise<NoInfer<R>>;

export function sendRequest<P, R>(to: RequestSender, request: ClientRequest<P, R>, params: NoInfer<P>): Promise<R> {
  // Omitted params stay omitted on the wire (JSON-RPC would otherwise send `[null]`).
  return (params === undefined ? to.sendRequest(request.method) : to.sendRequest(request.method, params)) as Promise<R>;
}

export function onRequest<P, R>(
  on: RequestReceiver,
  request: ClientRequest<P, R>,
  handler: RequestHandler<P, R>,
): void {
  on.onRequest(request.method, handler);
}

export async function sendNotification<P>(
  to: NotificationSender,
  notification: Notification<P>,
  params: NoInfer<P>,
): Promise<void> {
  await to.sendNotification(notification.method, params);
}

export function onNotification<P>(
  on: NotificationReceiver,
  notification: Notification<P>,
  handler: (params: NoInfer<P>) => void,
): void {
  on.onNotification(notification.method, handler);
}
