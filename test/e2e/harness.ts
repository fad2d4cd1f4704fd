/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// (The DOM types are for the functions that run inside the page through page.evaluate.)
//
// Drives a real VS Code as a user would: code-server 4.100.3 (VS Code 1.100.3 over HTTP) with the
// packaged .vsix installed, and Debian's Chromium through playwright-core as the user
// (test/e2e/README.md). scripts/setup-editor.mjs prepares both.
//
// Every wait is on UI state (a selector, a count, a text) with a deadline; never a fixed sleep.
// Nothing is acted on that was not confirmed first: the caret is moved with the keyboard (Go to Line)
// and its place read back from the status bar ("Ln X, Col Y") together with the active tab and the
// keyboard focus before any key that edits or asks about a position; a menu item is chosen by its
// exact title and confirmed focused before Enter; the editor's text is read from the saved file (the
// model), never from the lines the screen happens to draw. A busy machine makes the editor slower,
// never makes a test act in the wrong place.
// Everything an editor session starts is torn down by `close()`, which `startEditor` registers on the
// test context, so a failing test leaves no process behind. Screenshots and logs of each session go to
// test-results/e2e/<session name>/.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';

const root = path.resolve(import.meta.dirname, '..', '..');
export const artifactsRoot = path.join(root, 'test-results', 'e2e');
export const vsixPath = path.join(root, 'dist', 'kube-conflict-hints.vsix');
const editorEnvFile = path.join(root, '.cache', 'editor', 'env.json');

/** Chromium flags that work as root on these machines (real-editor.md). */
const chromiumFlags = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * How long a UI state may take to appear before the test fails. Only a bound for failing: a passing
 * test never waits it out. Generous, because the tests must pass beside other heavy work on a 2-core
 * machine, where a step that takes 2 s alone was seen to take 20 s.
 */
const defaultTimeoutMs = 60_000;
/** The same for starting code-server's workbench, the slowest step on a busy machine. */
const startTimeoutMs = 180_000;

/** What scripts/setup-editor.mjs wrote to .cache/editor/env.json. */
export interface EditorInstall {
  codeServerVersion: string;
  codeServerEntry: string;
  chromium: string;
}

export function editorInstall(): EditorInstall | undefined {
  if (!fs.existsSync(editorEnvFile)) return undefined;
  const install = JSON.parse(fs.readFileSync(editorEnvFile, 'utf8')) as EditorInstall;
  const present = fs.existsSync(install.codeServerEntry) && fs.existsSync(install.chromium);
  return present ? install : undefined;
}

/**
 * The prepared editor and the packaged extension, or: skip the test outside CI, fail it under
 * CI=true (the same rule as requireCluster in test/support/env.ts).
 */
export function requireEditor(t: TestContext): { install: EditorInstall; vsix: string } | undefined {
  const install = editorInstall();
  // scripts/test.mjs packages a .vsix of the run's own (KCH_VSIX); by hand, dist/ is used if current.
  const packaged = process.env.KCH_VSIX;
  let why: string | undefined;
  if (!install) why = 'the real editor is not set up: run `node scripts/setup-editor.mjs` (npm test does)';
  else if (packaged) why = fs.existsSync(packaged) ? undefined : `KCH_VSIX names a missing file: ${packaged}`;
  else if (!fs.existsSync(vsixPath))
    why = 'no dist/kube-conflict-hints.vsix: run `npm run package` (npm run test:e2e does)';
  else if (isOlderThanBundle(vsixPath))
    why = 'dist/kube-conflict-hints.vsix is older than the bundle: run `npm run package`';
  if (!why && install) return { install, vsix: packaged ?? vsixPath };
  if (process.env.CI === 'true') throw new Error(why);
  t.skip(why);
  return undefined;
}

function isOlderThanBundle(vsix: string): boolean {
  const packaged = fs.statSync(vsix).mtimeMs;
  return ['dist/client.js', 'dist/server.js', 'dist/server-bundle.js', 'package.json'].some((file) => {
    const full = path.join(root, file);
    return fs.existsSync(full) && fs.statSync(full).mtimeMs > packaged + 1000;
  });
}

export interface EditorOptions {
  /** Names the artifacts folder test-results/e2e/<name>/. */
  name: string;
  install: EditorInstall;
  vsix: string;
  /** The workspace folder: relative path → content. */
  files: Record<string, string>;
  /** VS Code user settings, written before the editor starts. */
  settings?: Record<string, unknown>;
  /**
   * True (default): workspace trust is switched off, the folder is trusted. False: trust stays on and
   * the trust dialog is answered "No", so the folder opens in Restricted Mode.
   */
  trusted?: boolean;
  /** Other .vsix files installed beside the extension (e.g. a YAML language service). */
  otherExtensions?: string[];
}

export interface Problem {
  severity: 'error' | 'warning' | 'info';
  message: string;
  /** The diagnostic's source, e.g. "kube-conflict-hints". */
  source?: string;
  /** Line and column as the Problems panel shows them (1-based), when shown. */
  line?: number;
  column?: number;
}

/** A place in a file, 1-based, as the status bar's "Ln X, Col Y" and Go to Line count. */
export interface Position {
  line: number;
  column: number;
}

/** What the workbench shows about the caret. */
export interface Caret {
  /** The active tab's file name. */
  file?: string;
  line?: number;
  column?: number;
  /** True when the status bar reports a selection. */
  selected: boolean;
  /** True when the keyboard focus is in the active editor's text. */
  focused: boolean;
}

interface QuickFixItem {
  title: string;
  focused: boolean;
  disabled: boolean;
}

/**
 * Where the `occurrence`-th YAML key `key` stands in `text` (1-based): its middle character, a position
 * on the key whichever side the editor counts a range's end.
 */
export function positionOfKey(text: string, key: string, occurrence = 0): Position {
  const pattern = new RegExp(`^(\\s*(?:-\\s+)?)${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:`);
  const lines = text.split('\n');
  let seen = 0;
  for (let i = 0; i < lines.length; i++) {
    const match = pattern.exec(lines[i] ?? '');
    if (match && seen++ === occurrence)
      return { line: i + 1, column: (match[1] ?? '').length + 1 + Math.floor(key.length / 2) };
  }
  throw new EditorError(`no key "${key}" (occurrence ${occurrence}) in:\n${text}`);
}

/**
 * Where the Problems panel says the error or warning on line `line` starts: the place a quick fix is
 * asked for, as a user would put the caret on the squiggle (which may be the value, not the key).
 */
export function problemPosition(problems: readonly Problem[], line: number): Position {
  const found = problems.filter((p) => p.severity !== 'info' && p.line === line && p.column !== undefined);
  if (found.length !== 1)
    throw new EditorError(
      `expected one error or warning on line ${line}, the Problems panel lists ${JSON.stringify(problems)}`,
    );
  return { line, column: found[0]!.column! };
}

export interface StatusBarItem {
  /** The text without icons, e.g. "admin". */
  text: string;
  /** Codicon names in the item, e.g. ["check"] or ["debug-disconnect"]. */
  icons: string[];
  /** True when the item has the warning background. */
  warning: boolean;
}

// Settings that keep a fresh profile quiet and deterministic: no welcome page, no update checks,
// immediate hovers.
const quietSettings: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.enabled': false,
  'editor.hover.delay': 100,
  'editor.minimap.enabled': false,
  'files.autoSave': 'off',
  // Nothing pops up while the tests type: a suggestion would take the next key (commit characters).
  'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
  'editor.suggestOnTriggerCharacters': false,
  'editor.acceptSuggestionOnCommitCharacter': false,
  'editor.parameterHints.enabled': false,
  'editor.inlineSuggest.enabled': false,
  'chat.commandCenter.enabled': false,
  // The language client's own trace (read by vscode-languageclient for the client id): every request
  // and answer lands in the output channel's log, kept in vscode-logs/, to explain a failure.
  'kubeConflictHints.trace.server': 'verbose',
};

export class EditorError extends Error {}

/** Starts code-server with a fresh profile and the .vsix installed, and opens the folder in Chromium. */
export async function startEditor(t: TestContext, options: EditorOptions): Promise<Editor> {
  const editor = new Editor(options);
  t.after(() => editor.close());
  await editor.start();
  return editor;
}

export class Editor {
  readonly artifacts: string;
  readonly workspace: string;
  private readonly scratch: string;
  private readonly userDataDir: string;
  private readonly extensionsDir: string;
  private server: ChildProcess | undefined;
  private serverExited: Promise<void> | undefined;
  private browser: Browser | undefined;
  private currentPage: Page | undefined;
  /** The workspace file `openFile` opened last: the one every caret check expects in front. */
  private activeFile: string | undefined;
  private serverLog: fs.WriteStream | undefined;
  private closed = false;
  /** Milliseconds each start-up phase took, kept in timings.json to see where the time goes. */
  private readonly timings: Record<string, number> = {};

  constructor(private readonly options: EditorOptions) {
    this.artifacts = path.join(artifactsRoot, options.name);
    fs.rmSync(this.artifacts, { recursive: true, force: true });
    fs.mkdirSync(this.artifacts, { recursive: true });
    this.scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-e2e-'));
    this.workspace = path.join(this.scratch, 'workspace');
    this.userDataDir = path.join(this.scratch, 'user-data');
    this.extensionsDir = path.join(this.scratch, 'extensions');
  }

  get page(): Page {
    if (!this.currentPage) throw new EditorError('the editor is not started');
    return this.currentPage;
  }

  async start(): Promise<void> {
    for (const [relative, content] of Object.entries(this.options.files)) this.writeFile(relative, content);
    const trusted = this.options.trusted ?? true;
    const settings = { ...quietSettings, 'security.workspace.trust.enabled': !trusted, ...this.options.settings };
    fs.mkdirSync(path.join(this.userDataDir, 'User'), { recursive: true });
    fs.writeFileSync(path.join(this.userDataDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
    let phaseStarted = Date.now();
    const phase = (name: string) => {
      this.timings[name] = Date.now() - phaseStarted;
      phaseStarted = Date.now();
    };
    this.installExtension();
    phase('installExtension');

    const port = await freePort();
    await this.startServer(port);
    phase('startServer');
    this.browser = await chromium.launch({
      executablePath: this.options.install.chromium,
      args: chromiumFlags,
      headless: true,
    });
    const context = await this.browser.newContext({ viewport: { width: 1400, height: 900 } });
    this.currentPage = await context.newPage();
    const browserLog = fs.createWriteStream(path.join(this.artifacts, 'browser.log'));
    this.currentPage.on('console', (message) => browserLog.write(`[${message.type()}] ${message.text()}\n`));
    this.currentPage.on('pageerror', (error) => browserLog.write(`[pageerror] ${error.message}\n`));
    this.currentPage.on('close', () => browserLog.end());
    this.currentPage.setDefaultTimeout(defaultTimeoutMs);
    phase('launchBrowser');

    await this.page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(this.workspace)}`, {
      timeout: startTimeoutMs,
    });
    await this.page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: startTimeoutMs });
    phase('workbench');
    if (!trusted) await this.answerTrustDialog('No');
    // The explorer lists the folder once the workbench has restored the workspace.
    await this.page
      .locator('.explorer-folders-view .monaco-list-row')
      .first()
      .waitFor({ state: 'visible', timeout: startTimeoutMs });
    phase('explorer');
  }

  /** Writes (or rewrites) a file of the workspace, as another program would. */
  writeFile(relative: string, content: string): void {
    const file = path.join(this.workspace, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }

  private installExtension(): void {
    for (const vsix of [...(this.options.otherExtensions ?? []), this.options.vsix]) {
      const result = spawnSync(
        process.execPath,
        [
          this.options.install.codeServerEntry,
          '--user-data-dir',
          this.userDataDir,
          '--extensions-dir',
          this.extensionsDir,
          '--install-extension',
          vsix,
        ],
        { encoding: 'utf8', env: this.serverEnv(), timeout: 120_000 },
      );
      fs.appendFileSync(path.join(this.artifacts, 'install-extension.log'), `${result.stdout}\n${result.stderr}`);
      if (result.status !== 0 || !/successfully installed/i.test(result.stdout + result.stderr)) {
        throw new EditorError(
          `installing ${path.basename(vsix)} into code-server failed (exit ${result.status}); see ${this.artifacts}/install-extension.log`,
        );
      }
    }
  }

  private serverEnv(): NodeJS.ProcessEnv {
    // Its own config and data folders (code-server writes config.yaml on first start), and no
    // KUBECONFIG: the extension must use the settings the test wrote.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      XDG_CONFIG_HOME: path.join(this.scratch, 'config'),
      XDG_DATA_HOME: path.join(this.scratch, 'data'),
    };
    delete env.KUBECONFIG;
    return env;
  }

  private async startServer(port: number): Promise<void> {
    const args = [
      this.options.install.codeServerEntry,
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      '--user-data-dir',
      this.userDataDir,
      '--extensions-dir',
      this.extensionsDir,
      this.workspace,
    ];
    // Its own process group, so teardown reaches the extension host and the language server too.
    const server = spawn(process.execPath, args, {
      env: this.serverEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.server = server;
    this.serverExited = new Promise((resolve) => server.once('exit', () => resolve()));
    const log = fs.createWriteStream(path.join(this.artifacts, 'code-server.log'));
    this.serverLog = log;
    server.stdout.pipe(log, { end: false });
    server.stderr.pipe(log, { end: false });
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(
        () =>
          reject(
            new EditorError(
              `code-server did not listen on port ${port} within ${startTimeoutMs / 1000}s; see ${this.artifacts}/code-server.log`,
            ),
          ),
        startTimeoutMs,
      );
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('HTTP server listening on')) {
          clearTimeout(timer);
          resolve();
        }
      };
      server.stdout.on('data', onData);
      server.stderr.on('data', onData);
      server.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new EditorError(
            `code-server exited (${code ?? signal}) before listening; see ${this.artifacts}/code-server.log`,
          ),
        );
      });
    });
  }

  private async answerTrustDialog(answer: 'Yes' | 'No'): Promise<void> {
    const dialog = this.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible' });
    await this.screenshot('trust-dialog');
    await dialog.getByRole('button', { name: answer === 'Yes' ? /Yes, I trust/ : /No, I don.t trust/ }).click();
    await dialog.waitFor({ state: 'hidden' });
  }

  /** Runs a command from the Command Palette by its exact title, as a user would. */
  async runCommand(title: string): Promise<void> {
    await this.openQuickInput('F1');
    await this.page.keyboard.type(title);
    await this.acceptQuickInputItem(title, `the command "${title}"`);
  }

  /** Trusts the folder through the Workspace Trust editor, and waits for Restricted Mode to end. */
  async trustWorkspace(): Promise<void> {
    await this.runCommand('Workspaces: Manage Workspace Trust');
    const trust = this.page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ });
    await trust.first().waitFor({ state: 'visible' });
    await this.screenshot('workspace-trust-editor');
    await trust.first().click();
    await this.page
      .locator('.workspace-trust-editor', { hasText: 'You trust this folder' })
      .first()
      .waitFor({ state: 'visible' });
  }

  /**
   * Opens a workspace file through Quick Open, as a user would, and waits until it is the active tab
   * with the caret at its start and the keyboard focus in its text.
   */
  async openFile(relative: string): Promise<void> {
    await this.openQuickInput('Control+P');
    await this.page.keyboard.type(relative);
    await this.acceptQuickInputItem(path.basename(relative), `${relative} in Quick Open`);
    this.activeFile = relative;
    await this.expectCaret({ line: 1, column: 1 }, `${relative} opened`);
  }

  /** Opens the Quick Input with `keys` (F1, Ctrl+P, Ctrl+G) and waits until its input has the focus. */
  private async openQuickInput(keys: string): Promise<void> {
    await this.closeWidgets();
    await this.page.keyboard.press(keys);
    await this.waitFor(
      () =>
        this.page.evaluate(
          () =>
            document.activeElement?.closest('.quick-input-widget') !== null &&
            document.activeElement?.tagName === 'INPUT',
        ),
      (focused) => focused,
      `the Quick Input to take the keyboard focus after ${keys}`,
    );
  }

  /**
   * Chooses the Quick Input item labelled exactly `label` with the keyboard: moves the focus onto it,
   * confirms it is focused, presses Enter. Fails, without pressing Enter, when no item has that label.
   */
  private async acceptQuickInputItem(label: string, what: string): Promise<void> {
    const labels = () =>
      this.page.evaluate(() =>
        [...document.querySelectorAll<HTMLElement>('.quick-input-widget .monaco-list-row')].map((row) => ({
          label: (row.querySelector('.label-name')?.textContent ?? '').replace(/\u00a0/g, ' ').trim(),
          focused: row.classList.contains('focused'),
        })),
      );
    const rows = await this.waitFor(labels, (seen) => seen.some((row) => row.label === label), what).catch(
      async (e: unknown) => {
        await this.page.keyboard.press('Escape');
        throw e;
      },
    );
    for (
      let step = 0;
      step <= rows.length && !(await labels()).some((row) => row.focused && row.label === label);
      step++
    ) {
      await this.page.keyboard.press('ArrowDown');
    }
    const focused = (await labels()).find((row) => row.focused);
    if (focused?.label !== label) {
      await this.page.keyboard.press('Escape');
      throw new EditorError(`could not focus ${what}; focused: ${JSON.stringify(focused?.label)}`);
    }
    await this.page.keyboard.press('Enter');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  }

  /** Answers a Quick Pick the extension opened by itself (not by a command of the test): chooses the item labelled `label`. */
  async answerQuickPick(label: string, what: string): Promise<void> {
    await this.page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: defaultTimeoutMs });
    await this.acceptQuickInputItem(label, what);
  }

  /** Closes hovers, menus and the Quick Input, so that keys reach the editor or the workbench. */
  private async closeWidgets(): Promise<void> {
    await this.page.keyboard.press('Escape');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await this.page.locator('.action-widget').waitFor({ state: 'hidden' });
  }

  /**
   * Where the caret is, as the user sees it: the active tab, the status bar's "Ln X, Col Y" (the
   * editor's own position, 1-based), and whether the keyboard focus is in that editor's text.
   */
  async caret(): Promise<Caret> {
    return this.page.evaluate(() => {
      const tab =
        document.querySelector<HTMLElement>('.tabs-container .tab.active')?.getAttribute('data-resource-name') ??
        undefined;
      const status = document.querySelector<HTMLElement>('[id="status.editor.selection"]')?.textContent ?? '';
      const at = /Ln (\d+), Col (\d+)/.exec(status);
      const focus = document.activeElement;
      // The editor takes keys in its hidden textarea (or its EditContext element), inside the active group.
      const focused =
        focus !== null &&
        focus.closest('.editor-group-container.active .monaco-editor') !== null &&
        (focus.matches('textarea.inputarea') || focus.classList.contains('native-edit-context'));
      return {
        ...(tab ? { file: tab } : {}),
        ...(at ? { line: Number(at[1]), column: Number(at[2]) } : {}),
        selected: /selected/.test(status),
        focused,
      };
    });
  }

  /**
   * Waits until the active tab is the file opened last, the keyboard focus is in its text and the caret
   * is at `at` with nothing selected; fails (naming what it saw) otherwise. Every key that edits or
   * asks about a position comes after this check.
   */
  async expectCaret(at: Position, what: string): Promise<Caret> {
    const file = this.activeFile && path.basename(this.activeFile);
    return this.waitFor(
      () => this.caret(),
      (seen) =>
        seen.file === file && seen.focused && !seen.selected && seen.line === at.line && seen.column === at.column,
      `the caret at Ln ${at.line}, Col ${at.column} in ${file ?? '(no file opened)'} with the keyboard focus (${what})`,
    );
  }

  /** Moves the caret with Go to Line/Column (Ctrl+G) and confirms where it landed. */
  async goTo(at: Position): Promise<void> {
    await this.openQuickInput('Control+G');
    const target = `${at.line}:${at.column}`;
    await this.page.keyboard.type(target);
    // The box already holds the ":" of the go-to-line picker; what was typed must follow it exactly.
    const typed = await this.waitFor(
      () => this.page.locator('.quick-input-widget .quick-input-box input').inputValue(),
      (value) => value.replace(/^:/, '') === target,
      `"${target}" in the Go to Line box`,
    );
    if (!typed.startsWith(':'))
      throw new EditorError(`Ctrl+G did not open Go to Line: the box holds ${JSON.stringify(typed)}`);
    await this.page.keyboard.press('Enter');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await this.expectCaret(at, `Go to Line ${target}`);
  }

  /**
   * Types at the end of line `line`: a new line, then `text`. The caret is confirmed before each step:
   * on `line` after End, at the start of the next line after Enter, `text.length` further after typing.
   */
  async typeOnNewLineAfter(line: number, text: string): Promise<void> {
    await this.goTo({ line, column: 1 });
    await this.page.keyboard.press('End');
    const end = await this.waitFor(
      () => this.caret(),
      (seen) => seen.line === line && (seen.column ?? 1) > 1,
      `the caret at the end of line ${line}`,
    );
    if (!end.focused || end.selected)
      throw new EditorError(`End moved the focus or selected text: ${JSON.stringify(end)}`);
    await this.page.keyboard.press('Enter');
    // Auto-indent puts the caret under the line above's key; that column is where the text starts.
    const start = await this.waitFor(
      () => this.caret(),
      (seen) => seen.line === line + 1,
      `the caret on the new line ${line + 1}`,
    );
    await this.expectCaret({ line: line + 1, column: start.column ?? 1 }, `a new line after line ${line}`);
    await this.page.keyboard.type(text);
    await this.expectCaret(
      { line: line + 1, column: (start.column ?? 1) + text.length },
      `"${text}" typed on line ${line + 1}`,
    );
  }

  /** True when the active file's tab shows unsaved changes. */
  async isDirty(): Promise<boolean> {
    const name = this.activeFile && path.basename(this.activeFile);
    if (!name) throw new EditorError('no file is open');
    const classes =
      (await this.page.locator(`.tabs-container .tab.active[data-resource-name="${name}"]`).getAttribute('class')) ??
      '';
    return /\bdirty\b/.test(classes);
  }

  /** The text of the active file on disk (after `save()`, the editor's own text). */
  savedText(): string {
    if (!this.activeFile) throw new EditorError('no file is open');
    return fs.readFileSync(path.join(this.workspace, this.activeFile), 'utf8');
  }

  /**
   * Saves the active file (Ctrl+S): its tab must show unsaved changes first and none after. Returns
   * the saved text, which is the editor's own text, not what the screen happens to draw.
   */
  async save(): Promise<string> {
    const name = this.activeFile && path.basename(this.activeFile);
    if (!name) throw new EditorError('no file is open');
    const tab = this.page.locator(`.tabs-container .tab.active[data-resource-name="${name}"]`);
    await this.waitFor(
      async () => (await tab.getAttribute('class').catch(() => null)) ?? '',
      (classes) => /\bdirty\b/.test(classes),
      `the tab of ${name} to show unsaved changes before saving`,
    );
    await this.page.keyboard.press('Control+S');
    await this.waitFor(
      async () => (await tab.getAttribute('class').catch(() => null)) ?? '',
      (classes) => classes !== '' && !/\bdirty\b/.test(classes),
      `the tab of ${name} to show no unsaved changes after saving`,
    );
    return this.savedText();
  }

  /** Opens the Problems panel (View: Problems) when it is not open. */
  async showProblems(): Promise<void> {
    if (await this.page.locator('.markers-panel').isVisible()) return;
    await this.page.keyboard.press('Control+Shift+M');
    await this.page.locator('.markers-panel').waitFor({ state: 'visible' });
  }

  /** The problems the Problems panel lists for all files. */
  async problems(): Promise<Problem[]> {
    await this.showProblems();
    return this.page.evaluate(() => {
      const rows = [...document.querySelectorAll<HTMLElement>('.markers-panel .monaco-list-row')];
      const problems: Problem[] = [];
      for (const row of rows) {
        const icon = row.querySelector('.marker-icon');
        if (!icon) continue; // a file row
        const severity = icon.classList.contains('error')
          ? 'error'
          : icon.classList.contains('warning')
            ? 'warning'
            : 'info';
        const message = (row.querySelector('.marker-message')?.textContent ?? '').trim();
        const source = row.querySelector('.marker-source')?.textContent?.trim();
        const position = /\[Ln (\d+), Col (\d+)\]/.exec(row.querySelector('.marker-line')?.textContent ?? '');
        problems.push({
          severity,
          message,
          ...(source ? { source } : {}),
          ...(position ? { line: Number(position[1]), column: Number(position[2]) } : {}),
        });
      }
      return problems;
    });
  }

  /** Waits until the Problems panel satisfies `until`; returns the problems it then lists. */
  async waitForProblems(
    until: (problems: Problem[]) => boolean,
    what: string,
    timeoutMs = defaultTimeoutMs,
  ): Promise<Problem[]> {
    return this.waitFor(() => this.problems(), until, what, timeoutMs);
  }

  /**
   * The Problems panel's own word that it lists nothing ("No problems have been detected…"), or ''
   * while it lists something: an empty list is only trusted when the panel says so itself.
   */
  async problemsPanelMessage(): Promise<string> {
    await this.showProblems();
    return this.page.evaluate(() => {
      const box = document.querySelector<HTMLElement>('.markers-panel .message-box-container');
      return box && box.offsetParent !== null ? (box.textContent ?? '').trim() : '';
    });
  }

  /** The CodeLens titles drawn in the active editor, top to bottom. */
  async codeLenses(): Promise<string[]> {
    return this.page.evaluate(() => {
      const lenses = [
        ...document.querySelectorAll<HTMLElement>('.editor-group-container.active .monaco-editor .codelens-decoration'),
      ];
      lenses.sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
      return lenses.map((lens) => (lens.textContent ?? '').replace(/\u00a0/g, ' ').trim());
    });
  }

  /**
   * Shows the hover at `at` with the keyboard (Go to Line, then Ctrl+K Ctrl+I: "Show or Focus Hover")
   * and returns its text once it satisfies `expect` (any text by default).
   */
  async hover(at: Position, options: { expect?: RegExp } = {}): Promise<string> {
    await this.goTo(at);
    await this.page.keyboard.press('Control+K');
    await this.page.keyboard.press('Control+I');
    const read = () =>
      this.page.evaluate(() => {
        const hover = document.querySelector<HTMLElement>('.monaco-editor .monaco-hover:not(.hidden)');
        if (!hover || hover.offsetParent === null) return '';
        // One line per hover part (a diagnostic, each provider's hover); the action bar is left out.
        const rows = [...hover.querySelectorAll<HTMLElement>('.hover-row:not(.status-bar)')];
        return rows.map((row) => row.innerText.trim()).join('\n');
      });
    const where = `Ln ${at.line}, Col ${at.column}`;
    return this.waitFor(
      read,
      (text) => (options.expect ? options.expect.test(text) : text !== ''),
      `a hover at ${where}${options.expect ? ` matching ${options.expect}` : ''}`,
    );
  }

  /**
   * Opens the quick fix menu (Ctrl+.) at `at` and returns its items, in order. The editor answers
   * Ctrl+. with "No code actions available" when its own automatic request (250 ms after the caret
   * moved, or after the diagnostics were refreshed) supersedes the one Ctrl+. started; that answer is
   * seen, kept as a screenshot, and the menu asked for again at the re-confirmed caret. On a very
   * busy machine the key can also be lost (neither the menu nor that answer comes); after half the
   * usual wait it is pressed again the same way. Opening the menu changes nothing, and a menu that
   * never offers the fix still fails the test.
   */
  private async openQuickFixMenu(at: Position): Promise<QuickFixItem[]> {
    const where = `Ln ${at.line}, Col ${at.column}`;
    const attempts = 3;
    for (let attempt = 1; ; attempt++) {
      await this.goTo(at);
      await this.page.keyboard.press('Control+.');
      const what = `the quick fix menu (or the editor's "No code actions available") at ${where}`;
      const shown = await this.waitFor(
        () =>
          this.page.evaluate(() => {
            const menu = document.querySelector<HTMLElement>('.action-widget');
            if (menu && menu.offsetParent !== null && menu.querySelector('.monaco-list-row.action')) return 'menu';
            const message = document.querySelector<HTMLElement>('.monaco-editor-overlaymessage');
            return message && message.offsetParent !== null && /No code actions/i.test(message.textContent ?? '')
              ? 'none'
              : '';
          }),
        (seen) => seen !== '',
        what,
        defaultTimeoutMs / 2,
      ).catch((e: unknown) => {
        if (attempt === attempts || !(e instanceof EditorError)) throw e;
        return 'nothing';
      });
      if (shown === 'menu') return this.quickFixItems();
      await this.screenshot(`${shown === 'none' ? 'no-code-actions' : 'no-quick-fix-menu'}-${attempt}`);
      if (attempt === attempts)
        throw new EditorError(`the editor answered "No code actions available" at ${where} ${attempts} times`);
    }
  }

  private async quickFixItems(): Promise<QuickFixItem[]> {
    return this.page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('.action-widget .monaco-list-row.action')].map((row) => ({
        title: (row.querySelector('.title')?.textContent ?? row.getAttribute('aria-label') ?? row.textContent ?? '')
          .replace(/\u00a0/g, ' ')
          .trim(),
        focused: row.classList.contains('focused'),
        disabled: row.classList.contains('option-disabled') || row.getAttribute('aria-disabled') === 'true',
      })),
    );
  }

  /**
   * Applies the quick fix titled `title` at `at` (Ctrl+.): exactly one enabled item must match (a
   * string matches whole, a RegExp as given); it is focused with the keyboard and confirmed focused
   * before Enter. When none or several match, the menu is closed and nothing is applied.
   */
  async quickFix(at: Position, title: string | RegExp): Promise<void> {
    const items = await this.openQuickFixMenu(at);
    await this.screenshot('quick-fix-menu');
    const matches = (text: string) => (typeof title === 'string' ? text === title : title.test(text));
    const candidates = items.filter((item) => !item.disabled && matches(item.title));
    if (candidates.length !== 1) {
      await this.page.keyboard.press('Escape');
      throw new EditorError(
        `${candidates.length === 0 ? 'no' : 'more than one'} enabled quick fix ${title} at Ln ${at.line}, Col ${at.column}; offered: ${JSON.stringify(items)}`,
      );
    }
    const wanted = candidates[0]!.title;
    for (
      let step = 0;
      step <= items.length && !(await this.quickFixItems()).some((item) => item.focused && item.title === wanted);
      step++
    ) {
      await this.page.keyboard.press('ArrowDown');
    }
    const focused = (await this.quickFixItems()).find((item) => item.focused);
    if (focused?.title !== wanted) {
      await this.page.keyboard.press('Escape');
      throw new EditorError(`could not focus the quick fix "${wanted}"; focused: ${JSON.stringify(focused?.title)}`);
    }
    await this.page.keyboard.press('Enter');
    await this.page.locator('.action-widget').waitFor({ state: 'hidden' });
  }

  /** The titles the quick fix menu (Ctrl+.) offers at `at`; closes the menu again. */
  async quickFixTitles(at: Position): Promise<string[]> {
    const items = await this.openQuickFixMenu(at);
    await this.page.keyboard.press('Escape');
    await this.page.locator('.action-widget').waitFor({ state: 'hidden' });
    return items.map((item) => item.title);
  }

  /** Records how long a test step took, next to the start-up phases in timings.json. */
  time(step: string, started: number): void {
    this.timings[step] = Date.now() - started;
  }

  /** The extension's status bar item. */
  async statusBarItem(): Promise<StatusBarItem | undefined> {
    return this.page.evaluate(() => {
      const item = document.querySelector<HTMLElement>('.statusbar-item[id$="kubeConflictHints.status"]');
      if (!item) return undefined;
      const icons = [...item.querySelectorAll('.codicon')].flatMap((icon) =>
        [...icon.classList]
          .filter((name) => name.startsWith('codicon-'))
          .map((name) => name.slice('codicon-'.length).replace(/~spin$/, '')),
      );
      const background = item.style.backgroundColor || getComputedStyle(item).backgroundColor;
      const warning =
        item.classList.contains('warning-kind') ||
        /warning/i.test(item.getAttribute('style') ?? '') ||
        background.includes('statusBarItem-warningBackground');
      return { text: (item.textContent ?? '').trim(), icons, warning };
    });
  }

  /** Waits until the status bar item satisfies `until`; on a timeout the error quotes its tooltip too. */
  async waitForStatus(
    until: (item: StatusBarItem) => boolean,
    what: string,
    timeoutMs = defaultTimeoutMs,
  ): Promise<StatusBarItem> {
    try {
      const item = await this.waitFor(
        () => this.statusBarItem(),
        (value) => value !== undefined && until(value),
        what,
        timeoutMs,
      );
      return item as StatusBarItem;
    } catch (error) {
      if (!(error instanceof EditorError)) throw error;
      // The tooltip says why (the request that failed and the server's words): worth a few seconds.
      const tooltip = await Promise.race([
        this.statusBarTooltip().catch(
          (e: unknown) => `(tooltip not read: ${e instanceof Error ? e.message : String(e)})`,
        ),
        new Promise<string>((resolve) => setTimeout(() => resolve('(tooltip not read within 10 s)'), 10_000).unref()),
      ]);
      throw new EditorError(`${error.message}; status tooltip: ${JSON.stringify(tooltip)}`);
    }
  }

  /**
   * The user agents with which this editor's language servers reach the API server (the session's
   * `kube-conflict-hints (editor; pid N)`), found among the processes of this code-server: other
   * editors running beside it send the same product name with their own pids.
   */
  languageServerUserAgents(): string[] {
    const group = this.server?.pid;
    if (group === undefined) return [];
    const agents: string[] = [];
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
        if (pgrp !== group) continue;
        const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        if (argv.some((arg) => arg.endsWith(path.join('dist', 'server.js'))))
          agents.push(`kube-conflict-hints (editor; pid ${entry})`);
      } catch {
        // The process ended while we looked.
      }
    }
    return agents;
  }

  /** The tooltip of the extension's status bar item, read by hovering it. */
  async statusBarTooltip(): Promise<string> {
    await this.page.keyboard.press('Escape');
    await this.page.locator('.statusbar-item[id$="kubeConflictHints.status"]').hover();
    const hover = this.page.locator('.workbench-hover, .monaco-hover:not(.hidden)');
    return this.waitFor(
      async () => ((await hover.first().isVisible()) ? ((await hover.first().textContent()) ?? '') : ''),
      (text) => text.includes('Kube Conflict Hints'),
      'the status bar tooltip',
    );
  }

  /** Paths of the extension's output channel logs in this profile ("Kube Conflict Hints"). */
  outputChannelLogs(): string[] {
    return findFiles(path.join(this.userDataDir, 'logs'), (name) => name.endsWith('Kube Conflict Hints.log'));
  }

  /** Saves a screenshot of the whole window to test-results/e2e/<name>/<step>.png. */
  async screenshot(step: string): Promise<string> {
    const file = path.join(this.artifacts, `${step}.png`);
    // Finished animations: a hover fading in would otherwise be caught half transparent.
    await this.page.screenshot({ path: file, animations: 'disabled' });
    return file;
  }

  /** Reads `read()` until `until` holds, on UI state only; the error says what was last seen. */
  async waitFor<T>(
    read: () => Promise<T>,
    until: (value: T) => boolean,
    what: string,
    timeoutMs = defaultTimeoutMs,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: T = await read();
    while (!until(last)) {
      if (Date.now() > deadline)
        throw new EditorError(`timed out after ${timeoutMs}ms waiting for ${what}; last seen: ${JSON.stringify(last)}`);
      // Yield to the page for one animation frame, then look again.
      await this.page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
      last = await read();
    }
    return last;
  }

  /** Stops the browser and code-server (the whole process group) and keeps the logs. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.currentPage && !this.currentPage.isClosed()) await this.screenshot('at-close').catch(() => undefined);
    await this.browser?.close().catch(() => undefined);
    const server = this.server;
    if (server?.pid !== undefined && server.exitCode === null && server.signalCode === null) {
      signalGroup(server.pid, 'SIGTERM');
      const stopped = await Promise.race([
        this.serverExited?.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000).unref()),
      ]);
      if (!stopped) signalGroup(server.pid, 'SIGKILL');
    }
    // The extension host and the language server may outlive their parent for a moment.
    if (server?.pid !== undefined) signalGroup(server.pid, 'SIGKILL');
    this.serverLog?.end();
    fs.writeFileSync(path.join(this.artifacts, 'timings.json'), JSON.stringify(this.timings, null, 2) + '\n');
    const logs = path.join(this.userDataDir, 'logs');
    if (fs.existsSync(logs)) fs.cpSync(logs, path.join(this.artifacts, 'vscode-logs'), { recursive: true });
    fs.rmSync(this.scratch, { recursive: true, force: true });
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function findFiles(dir: string, match: (name: string) => boolean): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && match(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}
