// Where the `kubeConflictHints` settings come from, for every kind of client. VS Code answers
// `workspace/configuration` per document; Neovim, Helix, Zed, Emacs and JetBrains clients each
// support some of the three ways LSP offers, and some none:
//
//   initializationOptions: { "kubeConflictHints": { ... } }                  (sent once, at start)
//   workspace/didChangeConfiguration: { settings: { "kubeConflictHints": { ... } } }   (pushed)
//   workspace/configuration, section "kubeConflictHints"                      (asked per document)
//
// Each later source overrides the earlier ones key by key, and what none of them says is the
// default (kubeconfig from KUBECONFIG, then ~/.kube/config; the current context). A client that
// answers `workspace/configuration` with null for a section it does not know (Neovim does) keeps
// what the other two said. Nothing is kept beyond this connection: the pushed settings are the
// client's latest word, and an answer to `workspace/configuration` is never cached.
import type { Connection, InitializeParams } from 'vscode-languageserver/node';
import { sanitizeSettings, settingsSection, type Settings } from '../protocol';

type RawSettings = Record<string, unknown>;

export class SettingsSources {
  private canAsk = false;
  private initial: RawSettings = {};
  private pushed: RawSettings = {};
  private readonly listeners = new Set<() => void>();

  constructor(private readonly connection: Connection) {
    connection.onDidChangeConfiguration((params) => {
      // VS Code's client pushes the section (or null, meaning "ask me"); others push everything.
      this.pushed = sectionOf(params?.settings) ?? {};
      for (const listener of this.listeners) listener();
    });
  }

  /** Reads what the client said at start-up: its capabilities and any initial settings. */
  initialize(params: InitializeParams): void {
    this.canAsk = params.capabilities.workspace?.configuration === true;
    this.initial = sectionOf(params.initializationOptions) ?? {};
  }

  /** Called after the settings may have changed (a didChangeConfiguration notification). */
  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** The settings for a document (a folder can override them), asked of the client each time. */
  async settingsFor(uri: string | undefined): Promise<Settings> {
    let asked: RawSettings = {};
    if (this.canAsk) {
      try {
        const raw: unknown = await this.connection.workspace.getConfiguration({ ...(uri ? { scopeUri: uri } : {}), section: settingsSection });
        asked = isRecord(raw) ? raw : {};
      } catch {
        // A client that advertises the request and then fails it still gets the other sources.
      }
    }
    return sanitizeSettings({ ...this.initial, ...this.pushed, ...definedOnly(asked) });
  }
}

/** `{ kubeConflictHints: {...} }` (the documented shape); also the section itself, for clients that can only send one object. */
function sectionOf(value: unknown): RawSettings | undefined {
  if (!isRecord(value)) return undefined;
  const section = value[settingsSection];
  if (isRecord(section)) return section;
  const known = Object.keys(sanitizeSettings({}));
  return Object.keys(value).some((k) => known.includes(k)) ? value : undefined;
}

/** A client's null for an unset key (Zed, eglot) must not hide what another source said. */
function definedOnly(raw: RawSettings): RawSettings {
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null && v !== undefined));
}

function isRecord(value: unknown): value is RawSettings {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
