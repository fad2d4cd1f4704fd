// Runs the command line as users run it: the bundled CLI (bundled here exactly as scripts/bundle.mjs
// bundles dist/cli.js, so a single test file needs no earlier `npm run build`), in a child process,
// with its exit code, stdout and stderr.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const bundle = path.join(repoRoot, 'test', 'out', 'cli', 'cli.js');
let built: Promise<void> | undefined;

/** The command line, bundled by the project's bundle script into test/out (dist/ is left alone). */
function buildOnce(): Promise<void> {
  built ??= new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(repoRoot, 'scripts', 'bundle.mjs'), '--only=cli', `--outdir=${path.dirname(bundle)}`],
      { stdio: 'inherit' },
    );
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`bundling the command line failed (exit ${code})`)),
    );
  });
  return built;
}

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `user`: run as another user (see unprivilegedUser), to meet permissions as users meet them. */
/** `stdin`: what the command reads on its standard input (text, or a stream piped in as a shell pipes it). */
/** `stdoutClosed`: the reader of its output has gone before it writes (as `| head` does once it has its lines). */
/** `timeoutMs`: how long before the run is killed (default 2 minutes), for a test that checks a very large input. */
export async function runCli(
  args: readonly string[],
  options: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    user?: { uid: number; gid: number };
    stdin?: string | Buffer | NodeJS.ReadableStream;
    stdoutClosed?: boolean;
    timeoutMs?: number;
  } = {},
): Promise<CliRun> {
  // Take a piped stream at once: node drops what a finished process wrote if nobody reads it yet.
  let input = options.stdin;
  if (input !== undefined && typeof input !== 'string' && !Buffer.isBuffer(input))
    input = input.pipe(new PassThrough());
  await buildOnce();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, ...args], {
      cwd: options.cwd ?? repoRoot,
      ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
      // No KUBECONFIG from the developer's shell: every test says which cluster it means.
      env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), ...options.env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) {
      // A command that exits before reading all of its input closes the pipe: that is its answer, not ours to fail on.
      child.stdin!.on('error', () => {});
      if (typeof input === 'string' || Buffer.isBuffer(input)) child.stdin!.end(input);
      else input.pipe(child.stdin!);
    }
    let stdout = '';
    let stderr = '';
    if (options.stdoutClosed) child.stdout!.destroy();
    else child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/**
 * Whom a test runs the command line as when file permissions must hold: as root (CI containers)
 * permissions are not checked, so root's tests run it as `nobody`; anyone else is refused anyway.
 */
export function unprivilegedUser(): { uid: number; gid: number } | undefined {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
}

/** A fresh directory for a test's manifests; removed when the process exits. */
export function scratchDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `kch-${prefix}-`));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
}

/** 1-based line of the first line of `text` that matches. */
export function lineOf(text: string, pattern: RegExp): number {
  const index = text.split('\n').findIndex((l) => pattern.test(l));
  if (index < 0) throw new Error(`no line matches ${pattern}`);
  return index + 1;
}
