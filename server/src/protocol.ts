// Plain-data contract between the VS Code client and the language server: settings, custom
// messages and their payloads. No imports, so both sides (and the CLI) can depend on it.

export type ApplyMode = 'serverSide' | 'clientSide' | 'create';
export const applyModes: readonly ApplyMode[] = ['serverSide', 'clientSide', 'create'];

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
}

export type ClusterHealth = 'connected' | 'unreachable' | 'unauthenticated' | 'forbidden' | 'throttled' | 'failing' | 'disabled' | 'unknown';

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
  /** Drop the caches, rediscover and relist. */
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
