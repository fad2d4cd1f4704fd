// Plain-data contract between the VS Code client and the language server: settings, custom
// messages and their payloads. No imports, so both sides (and the CLI) can depend on it.

export type ApplyMode = 'serverSide' | 'clientSide' | 'create';
export const applyModes: readonly ApplyMode[] = ['serverSide', 'clientSide', 'create'];

/**
 * Who reports YAML syntax problems (and duplicate keys): `auto` leaves them to another language
 * service of the document's language when the editor has one (Red Hat's YAML extension, the
 * built-in JSON one), `always` reports them here too, `never` leaves them to others.
 */
export type SyntaxErrorsMode = 'auto' | 'always' | 'never';
export const syntaxErrorsModes: readonly SyntaxErrorsMode[] = ['auto', 'always', 'never'];

/** The `kubeConflictHints.*` settings, read per document and never kept in server globals. */
export interface Settings {
  fieldManager: string;
  applyMode: ApplyMode;
  kubeconfig: string;
  context: string;
  namespace: string;
  /** A summary line above each resource. */
  codeLens: boolean;
  /** Confirm predictions with a dry-run apply whenever a file is saved. */
  verifyOnSave: boolean;
  syntaxErrors: SyntaxErrorsMode;
  /** Per finding code: another severity, or `off` to hide it (`{"would-delete": "off"}`). */
  severity: Readonly<Record<string, SeverityOverride>>;
}

export type SeverityOverride = 'error' | 'warning' | 'information' | 'off';
const severityOverrides: readonly SeverityOverride[] = ['error', 'warning', 'information', 'off'];

export const defaultSettings: Settings = {
  fieldManager: 'kubectl',
  applyMode: 'serverSide',
  kubeconfig: '',
  context: '',
  namespace: '',
  codeLens: true,
  verifyOnSave: false,
  syntaxErrors: 'auto',
  severity: {},
};

/** Turns whatever the editor sent (any shape, any age of settings file) into valid settings. */
export function sanitizeSettings(raw: unknown): Settings {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const str = (v: unknown, fallback: string) => (typeof v === 'string' ? v.trim() : fallback);
  const mode = applyModes.includes(r.applyMode as ApplyMode) ? (r.applyMode as ApplyMode) : defaultSettings.applyMode;
  return {
    fieldManager: str(r.fieldManager, '') || defaultSettings.fieldManager,
    applyMode: mode,
    kubeconfig: str(r.kubeconfig, ''),
    context: str(r.context, ''),
    namespace: str(r.namespace, ''),
    codeLens: typeof r.codeLens === 'boolean' ? r.codeLens : defaultSettings.codeLens,
    verifyOnSave: typeof r.verifyOnSave === 'boolean' ? r.verifyOnSave : defaultSettings.verifyOnSave,
    syntaxErrors: syntaxErrorsModes.includes(r.syntaxErrors as SyntaxErrorsMode) ? (r.syntaxErrors as SyntaxErrorsMode) : defaultSettings.syntaxErrors,
    severity: sanitizeSeverity(r.severity),
  };
}

/** Only `code: level` pairs with a code-like key and a known level; anything else is dropped. */
function sanitizeSeverity(raw: unknown): Record<string, SeverityOverride> {
  const out: Record<string, SeverityOverride> = {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return out;
  for (const [code, level] of Object.entries(raw as Record<string, unknown>)) {
    if (/^[a-z][a-z-]{0,63}$/.test(code) && severityOverrides.includes(level as SeverityOverride)) out[code] = level as SeverityOverride;
  }
  return out;
}

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
 * Language id → the extension that already reports syntax errors for documents of that language
 * (e.g. `{ yaml: 'redhat.vscode-yaml', json: 'vscode.json-language-features' }`). Sent at start
 * and again (syntaxServicesNotification) when extensions come or go.
 */
export type SyntaxServices = Record<string, string>;

/** Client → server: the syntax-reporting language services changed. */
export const syntaxServicesNotification = 'kubeConflictHints/syntaxServices';

/**
 * `idle`: cluster access is allowed but nothing asked for it yet (no Kubernetes manifest open, no
 * command): no kubeconfig read, no request sent.
 */
export type ClusterHealth = 'connected' | 'unreachable' | 'unauthenticated' | 'forbidden' | 'throttled' | 'failing' | 'disabled' | 'unknown' | 'idle';

/** Server → client: what the status bar shows. */
export const statusNotification = 'kubeConflictHints/status';
export interface StatusParams {
  health: ClusterHealth;
  context: string;
  server?: string;
  /** One sentence for the tooltip, e.g. the error of the last request. */
  detail: string;
}

/** Client → server requests and server → client notifications beyond LSP. */
export const requests = {
  /**
   * Drop the caches, rediscover and relist. Sent by a user's command (params: the active document,
   * if any) it also connects when no manifest has been opened yet.
   */
  refresh: 'kubeConflictHints/refresh',
  /** The contexts of the kubeconfig the document's settings select. */
  contexts: 'kubeConflictHints/contexts',
  /** Field managers seen on the live objects of a document (for the picker). */
  managers: 'kubeConflictHints/managers',
  /** The live object under the cursor as YAML annotated with each line's owners. */
  ownership: 'kubeConflictHints/ownership',
  /** Confirm the document's predictions with dry-run applies. */
  verify: 'kubeConflictHints/verify',
} as const;

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

export interface ContextsResult {
  current?: string;
  contexts: { name: string; cluster: string; namespace?: string; server?: string }[];
  problem?: string;
}

export interface OwnershipResult {
  title: string;
  text: string;
}

export interface VerifyResult {
  /** Resources confirmed as predicted. */
  agreed: number;
  /** One line per resource where the server's answer differed from the prediction. */
  differences: string[];
  /** Resources that could not be verified, with why. */
  failed: string[];
}
