/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// (The DOM types are for the functions that run inside the page through page.evaluate.)
//
// Drives a real VS Code as a user would: code-server 4.100.3 (VS Code 1.100.3 over HTTP) with the
// packaged .vsix installed, and Debian's Chromium through playwright-core as the user
// (../shared/reference/real-editor.md). scripts/setup-editor.mjs prepares both.
//
// Every wait is on UI state (a selector, a count, a text) with a deadline; never a fixed sleep.
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
const chromiumFlags = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** How long a UI state may take to appear; the extension talks to a real API server. */
const defaultTimeoutMs = 30_000;

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
  else if (!fs.existsSync(vsixPath)) why = 'no dist/kube-conflict-hints.vsix: run `npm run package` (npm run test:e2e does)';
  else if (isOlderThanBundle(vsixPath)) why = 'dist/kube-conflict-hints.vsix is older than the bundle: run `npm run package`';
  if (!why && install) return { install, vsix: packaged ?? vsixPath };
  if (process.env.CI === 'true') throw new Error(why);
  t.skip(why);
  return undefined;
}

function isOlderThanBundle(vsix: string): boolean {
  const packaged = fs.statSync(vsix).mtimeMs;
  return ['dist/client.js', 'dist/server.js', 'package.json'].some((file) => {
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
  'chat.commandCenter.enabled': false,
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
    this.browser = await chromium.launch({ executablePath: this.options.install.chromium, args: chromiumFlags, headless: true });
    const context = await this.browser.newContext({ viewport: { width: 1400, height: 900 } });
    this.currentPage = await context.newPage();
    const browserLog = fs.createWriteStream(path.join(this.artifacts, 'browser.log'));
    this.currentPage.on('console', (message) => browserLog.write(`[${message.type()}] ${message.text()}\n`));
    this.currentPage.on('pageerror', (error) => browserLog.write(`[pageerror] ${error.message}\n`));
    this.currentPage.on('close', () => browserLog.end());
    this.currentPage.setDefaultTimeout(defaultTimeoutMs);
    phase('launchBrowser');

    await this.page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(this.workspace)}`);
    await this.page.locator('.monaco-workbench').waitFor({ state: 'visible' });
    phase('workbench');
    if (!trusted) await this.answerTrustDialog('No');
    // The explorer lists the folder once the workbench has restored the workspace.
    await this.page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ state: 'visible' });
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
        [this.options.install.codeServerEntry, '--user-data-dir', this.userDataDir, '--extensions-dir', this.extensionsDir, '--install-extension', vsix],
        { encoding: 'utf8', env: this.serverEnv(), timeout: 120_000 },
      );
      fs.appendFileSync(path.join(this.artifacts, 'install-extension.log'), `${result.stdout}\n${result.stderr}`);
      if (result.status !== 0 || !/successfully installed/i.test(result.stdout + result.stderr)) {
        throw new EditorError(`installing ${path.basename(vsix)} into code-server failed (exit ${result.status}); see ${this.artifacts}/install-extension.log`);
      }
    }
  }

  private serverEnv(): NodeJS.ProcessEnv {
    // Its own config and data folders (code-server writes config.yaml on first start), and no
    // KUBECONFIG: the extension must use the settings the test wrote.
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: path.join(this.scratch, 'config'), XDG_DATA_HOME: path.join(this.scratch, 'data') };
    delete env.KUBECONFIG;
    return env;
  }

  private async startServer(port: number): Promise<void> {
    const args = [
      this.options.install.codeServerEntry,
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      '--user-data-dir', this.userDataDir,
      '--extensions-dir', this.extensionsDir,
      this.workspace,
    ];
    // Its own process group, so teardown reaches the extension host and the language server too.
    const server = spawn(process.execPath, args, { env: this.serverEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.server = server;
    this.serverExited = new Promise((resolve) => server.once('exit', () => resolve()));
    const log = fs.createWriteStream(path.join(this.artifacts, 'code-server.log'));
    this.serverLog = log;
    server.stdout.pipe(log, { end: false });
    server.stderr.pipe(log, { end: false });
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new EditorError(`code-server did not listen on port ${port} within 60s; see ${this.artifacts}/code-server.log`)), 60_000);
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
        reject(new EditorError(`code-server exited (${code ?? signal}) before listening; see ${this.artifacts}/code-server.log`));
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

  /** Runs a command from the Command Palette by its title, as a user would. */
  async runCommand(title: string): Promise<void> {
    await this.runCommandKeys('F1', '.quick-input-widget');
    await this.page.keyboard.type(title);
    await this.page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor({ state: 'visible' });
    await this.page.keyboard.press('Enter');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  }

  /** Trusts the folder through the Workspace Trust editor, and waits for Restricted Mode to end. */
  async trustWorkspace(): Promise<void> {
    await this.runCommand('Workspaces: Manage Workspace Trust');
    const trust = this.page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ });
    await trust.first().waitFor({ state: 'visible' });
    await this.screenshot('workspace-trust-editor');
    await trust.first().click();
    await this.page.locator('.workspace-trust-editor', { hasText: 'You trust this folder' }).first().waitFor({ state: 'visible' });
  }

  /** Opens a workspace file through Quick Open, as a user would, and waits for its text. */
  async openFile(relative: string): Promise<void> {
    await this.runCommandKeys('Control+P', '.quick-input-widget');
    await this.page.keyboard.type(relative);
    const name = path.basename(relative);
    await this.page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first().waitFor({ state: 'visible' });
    await this.page.keyboard.press('Enter');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await this.page.locator(`.tabs-container .tab.active[data-resource-name="${name}"]`).waitFor({ state: 'visible' });
    const firstLine = fs.readFileSync(path.join(this.workspace, relative), 'utf8').split('\n').find((line) => line.trim() !== '');
    if (firstLine) await this.waitFor(() => this.editorText(), (text) => text.includes(firstLine.trim()), `the editor to show ${relative}`);
  }

  /** Presses a key chord on the workbench and waits for the element it should show. */
  private async runCommandKeys(keys: string, shows: string): Promise<void> {
    const target = this.page.locator(shows);
    await this.page.keyboard.press(keys);
    await target.first().waitFor({ state: 'visible' });
  }

  /** The visible text of the active editor, one string with "\n" between lines. */
  async editorText(): Promise<string> {
    return this.page.evaluate(() => {
      const lines = [...document.querySelectorAll<HTMLElement>('.editor-group-container.active .monaco-editor .view-lines .view-line')];
      // Lines are absolutely positioned and not in DOM order; sort them by their top offset.
      lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
      return lines.map((line) => (line.textContent ?? '').replace(/\u00a0/g, ' ')).join('\n');
    });
  }

  /** Opens the Problems panel (View: Problems) when it is not open. */
  async showProblems(): Promise<void> {
    if (await this.page.locator('.markers-panel').isVisible()) return;
    await this.runCommandKeys('Control+Shift+M', '.markers-panel');
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
        const severity = icon.classList.contains('error') ? 'error' : icon.classList.contains('warning') ? 'warning' : 'info';
        const message = (row.querySelector('.marker-message')?.textContent ?? '').trim();
        const source = row.querySelector('.marker-source')?.textContent?.trim();
        const position = /\[Ln (\d+), Col (\d+)\]/.exec(row.querySelector('.marker-line')?.textContent ?? '');
        problems.push({ severity, message, ...(source ? { source } : {}), ...(position ? { line: Number(position[1]), column: Number(position[2]) } : {}) });
      }
      return problems;
    });
  }

  /** Waits until the Problems panel satisfies `until`; returns the problems it then lists. */
  async waitForProblems(until: (problems: Problem[]) => boolean, what: string, timeoutMs = defaultTimeoutMs): Promise<Problem[]> {
    return this.waitFor(() => this.problems(), until, what, timeoutMs);
  }

  /**
   * Moves the mouse over `word` in the active editor (the `occurrence`-th time it appears) and returns
   * the text of the hover that opens. The squiggle overlay takes no pointer events; the text does.
   */
  async hover(word: string, options: { occurrence?: number; expect?: RegExp } = {}): Promise<string> {
    await this.page.keyboard.press('Escape');
    const point = await this.wordCenter(word, options.occurrence ?? 0);
    // Arrive from elsewhere so the editor sees a fresh mouse move onto the word.
    await this.page.mouse.move(point.x, point.y + 200);
    await this.page.mouse.move(point.x, point.y, { steps: 4 });
    const read = () =>
      this.page.evaluate(() => {
        const hover = document.querySelector<HTMLElement>('.monaco-editor .monaco-hover:not(.hidden)');
        if (!hover || hover.offsetParent === null) return '';
        // One line per hover part (a diagnostic, each provider's hover); the action bar is left out.
        const rows = [...hover.querySelectorAll<HTMLElement>('.hover-row:not(.status-bar)')];
        return rows.map((row) => row.innerText.trim()).join('\n');
      });
    return this.waitFor(read, (text) => (options.expect ? options.expect.test(text) : text !== ''), `a hover on "${word}"${options.expect ? ` matching ${options.expect}` : ''}`);
  }

  /** Where `word` (its `occurrence`-th appearance) is drawn in the active editor, in page pixels. */
  private async wordCenter(word: string, occurrence: number): Promise<{ x: number; y: number }> {
    const point = await this.waitFor(
      () =>
        this.page.evaluate(
          ({ word, occurrence }) => {
            const lines = [...document.querySelectorAll<HTMLElement>('.editor-group-container.active .monaco-editor .view-lines .view-line')];
            lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
            let seen = 0;
            for (const line of lines) {
              // A line is drawn as one span per token; search the line's text, then map the match
              // back onto the text nodes it spans.
              const nodes: { node: Node; start: number }[] = [];
              let text = '';
              const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
              for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                nodes.push({ node, start: text.length });
                text += (node.textContent ?? '').replace(/\u00a0/g, ' ');
              }
              for (let index = text.indexOf(word); index >= 0; index = text.indexOf(word, index + 1)) {
                if (seen++ !== occurrence) continue;
                // (No helper functions in here: tsx would wrap them in a __name() the page lacks.)
                const last = index + word.length - 1;
                let start = nodes[0];
                let end = nodes[0];
                for (const entry of nodes) {
                  if (entry.start <= index) start = entry;
                  if (entry.start <= last) end = entry;
                }
                const range = document.createRange();
                range.setStart(start.node, index - start.start);
                range.setEnd(end.node, last - end.start + 1);
                const rect = range.getBoundingClientRect();
                return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
              }
            }
            return undefined;
          },
          { word, occurrence },
        ),
      (found) => found !== undefined,
      `"${word}" (occurrence ${occurrence}) in the editor`,
    );
    return point as { x: number; y: number };
  }

  /** Puts the cursor on `word` with a click. */
  async clickWord(word: string, occurrence = 0): Promise<void> {
    const point = await this.wordCenter(word, occurrence);
    await this.page.mouse.click(point.x, point.y);
  }

  /** Puts the cursor on `word` and applies the quick fix titled `title` (Ctrl+.). */
  async quickFix(word: string, title: string | RegExp, occurrence = 0): Promise<void> {
    await this.page.keyboard.press('Escape');
    await this.clickWord(word, occurrence);
    await this.runCommandKeys('Control+.', '.action-widget');
    const items = this.page.locator('.action-widget .monaco-list-row.action');
    await items.first().waitFor({ state: 'visible' });
    await this.screenshot('quick-fix-menu');
    // A pointer block covers the menu while it opens; choose with the keyboard, as users mostly do.
    const titles = (await items.allTextContents()).map((text) => text.trim());
    const matches = (text: string) => (typeof title === 'string' ? text.includes(title) : title.test(text));
    if (!titles.some(matches)) throw new EditorError(`no quick fix ${title} on "${word}"; offered: ${JSON.stringify(titles)}`);
    for (let step = 0; step <= titles.length; step++) {
      const focused = (await this.page.locator('.action-widget .monaco-list-row.action.focused').getAttribute('aria-label')) ?? '';
      if (matches(focused)) break;
      await this.page.keyboard.press('ArrowDown');
    }
    await this.page.keyboard.press('Enter');
    await this.page.locator('.action-widget').waitFor({ state: 'hidden' });
  }

  /** Records how long a test step took, next to the start-up phases in timings.json. */
  time(step: string, started: number): void {
    this.timings[step] = Date.now() - started;
  }

  /** The titles the quick fix menu (Ctrl+.) offers on `word`; closes the menu again. */
  async quickFixTitles(word: string, occurrence = 0): Promise<string[]> {
    await this.page.keyboard.press('Escape');
    await this.clickWord(word, occurrence);
    await this.runCommandKeys('Control+.', '.action-widget');
    const titles = await this.page.locator('.action-widget .monaco-list-row.action').allTextContents();
    await this.page.keyboard.press('Escape');
    await this.page.locator('.action-widget').waitFor({ state: 'hidden' });
    return titles.map((title) => title.trim());
  }

  /** Types at the end of the line holding `word`: a new line, then `text`. */
  async typeOnNewLineAfter(word: string, text: string, occurrence = 0): Promise<void> {
    await this.clickWord(word, occurrence);
    await this.page.keyboard.press('End');
    await this.page.keyboard.press('Enter');
    // Auto-indent already produced the indentation of the line above; type the rest as is.
    await this.page.keyboard.type(text);
  }

  /** Saves the active editor and waits until its tab no longer shows unsaved changes. */
  async save(): Promise<void> {
    await this.page.keyboard.press('Control+S');
    await this.page.locator('.tabs-container .tab.active.dirty').waitFor({ state: 'detached' });
  }

  /** The extension's status bar item. */
  async statusBarItem(): Promise<StatusBarItem | undefined> {
    return this.page.evaluate(() => {
      const item = document.querySelector<HTMLElement>('.statusbar-item[id$="kubeConflictHints.status"]');
      if (!item) return undefined;
      const icons = [...item.querySelectorAll('.codicon')].flatMap((icon) =>
        [...icon.classList].filter((name) => name.startsWith('codicon-')).map((name) => name.slice('codicon-'.length).replace(/~spin$/, '')),
      );
      const background = item.style.backgroundColor || getComputedStyle(item).backgroundColor;
      const warning = item.classList.contains('warning-kind') || /warning/i.test(item.getAttribute('style') ?? '') || background.includes('statusBarItem-warningBackground');
      return { text: (item.textContent ?? '').trim(), icons, warning };
    });
  }

  /** Waits until the status bar item satisfies `until`. */
  async waitForStatus(until: (item: StatusBarItem) => boolean, what: string, timeoutMs = defaultTimeoutMs): Promise<StatusBarItem> {
    const item = await this.waitFor(() => this.statusBarItem(), (value) => value !== undefined && until(value), what, timeoutMs);
    return item as StatusBarItem;
  }

  /** The tooltip of the extension's status bar item, read by hovering it. */
  async statusBarTooltip(): Promise<string> {
    await this.page.keyboard.press('Escape');
    await this.page.locator('.statusbar-item[id$="kubeConflictHints.status"]').hover();
    const hover = this.page.locator('.workbench-hover, .monaco-hover:not(.hidden)');
    return this.waitFor(async () => ((await hover.first().isVisible()) ? ((await hover.first().textContent()) ?? '') : ''), (text) => text.includes('Kube Conflict Hints'), 'the status bar tooltip');
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
  async waitFor<T>(read: () => Promise<T>, until: (value: T) => boolean, what: string, timeoutMs = defaultTimeoutMs): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: T = await read();
    while (!until(last)) {
      if (Date.now() > deadline) throw new EditorError(`timed out after ${timeoutMs}ms waiting for ${what}; last seen: ${JSON.stringify(last)}`);
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
      const stopped = await Promise.race([this.serverExited?.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000).unref())]);
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
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && match(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}
