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
}

export const defaultSettings: Settings = {
  fieldManager: 'kubectl',
  applyMode: 'serverSide',
  kubeconfig: '',
  context: '',
  namespace: '',
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
  };
}

/** Sent by the client in initializationOptions. */
export interface InitializationOptions {
  /** False in an untrusted workspace: the server must not contact any cluster. */
  clusterAccess: boolean;
}

export type ClusterHealth = 'connected' | 'unreachable' | 'unauthenticated' | 'forbidden' | 'disabled' | 'unknown';

/** Server → client: what the status bar shows. */
export const statusNotification = 'kubeConflictHints/status';
export interface StatusParams {
  health: ClusterHealth;
  context: string;
  server?: string;
  /** One sentence for the tooltip, e.g. the error of the last request. */
  detail: string;
}
