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
//
// A client that does not say whether the workspace is trusted (every client but the VS Code
// extension) may answer the last two from files inside the project: Emacs answers them from a
// folder's `.dir-locals.el` without asking, Helix from a project's `.helix/languages.toml`. So,
// for such a client, the settings that name a program or a credential file — `helmPath` and
// `kustomizePath` run, a `kubeconfig` can run an exec plugin — are taken only from
// `initializationOptions`, which are written where the server's own command is: whoever can set
// them could already choose the command. From the other two sources they are ignored, once said.
import {
  MessageType,
  ShowMessageNotification,
  type Connection,
  type InitializeParams,
} from 'vscode-languageserver/node';
import { sanitizeSettings, settingsSection, statedTrust, type Settings } from '../protocol';

type RawSettings = Record<string, unknown>;

/** Settings that choose a program the server runs (directly, or as a kubeconfig's exec plugin). */
export const launchOnlyKeys = ['helmPath', 'kustomizePath', 'kubeconfig'] as const;

export class SettingsSources {
  private canAsk = false;
  /** Whether the client said if the workspace is trusted (the VS Code extension does; it then filters workspace settings itself). */
  private trustStated = false;
  private initial: RawSettings = {};
  private pushed: RawSettings = {};
  private readonly listeners = new Set<() => void>();
  private readonly ignoredSaid = new Set<string>();

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
    const trust = statedTrust(params.initializationOptions);
    this.trustStated = trust === 'trusted' || trust === 'untrusted';
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
        const raw: unknown = await this.connection.workspace.getConfiguration({
          ...(uri ? { scopeUri: uri } : {}),
          section: settingsSection,
        });
        asked = isRecord(raw) ? raw : {};
      } catch {
        // A client that advertises the request and then fails it still gets the other sources.
      }
    }
    return sanitizeSettings({
      ...this.initial,
      ...this.launchOnly(this.pushed, 'workspace/didChangeConfiguration'),
      ...this.launchOnly(definedOnly(asked), 'workspace/configuration'),
    });
  }

  /** Drops the program-choosing keys a project file may have answered (see the top of this file). */
  private launchOnly(raw: RawSettings, source: string): RawSettings {
    if (this.trustStated) return raw;
    const kept = { ...raw };
    for (const key of launchOnlyKeys) {
      if (!(key in kept)) continue;
      const value = kept[key];
      delete kept[key];
      if (value === '' || value === this.initial[key] || this.ignoredSaid.has(`${source} ${key}`)) continue;
      this.ignoredSaid.add(`${source} ${key}`);
      void this.connection.sendNotification(ShowMessageNotification.type, {
        type: MessageType.Warning,
        message: `Kube Conflict Hints: ignored ${settingsSection}.${key} from ${source}: it names a program to run (or a kubeconfig that can run one), and this editor may answer it from files inside the project. Set it in initializationOptions, next to the server's command.`,
      });
    }
    return kept;
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
