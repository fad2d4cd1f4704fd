// Running the user's own rendering tools (kustomize, kubectl kustomize, helm). One way to run them
// for the editor and the command line alike: no shell (arguments are never parsed again), nothing on
// standard input, a time limit, an output limit, and an answer as plain data that never throws.
//
// Whether a tool may run at all is decided above this layer: the editor runs one only in a trusted
// workspace, with a binary the user (not the workspace) chose.
import { spawn } from 'node:child_process';

export interface ToolRun {
  /** The program: an absolute path, or a name looked up on PATH. */
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Default 60 s: `helm template` of a chart with dependencies takes seconds, never minutes. */
  readonly timeoutMs?: number;
  /** Default 16 MiB, the largest file the command line reads. */
  readonly maxOutputBytes?: number;
  readonly env?: NodeJS.ProcessEnv;
}

export type ToolProblem =
  /** The program is not there (ENOENT) or may not be run (EACCES). */
  | { readonly kind: 'not-installed'; readonly command: string; readonly message: string }
  /** It ran and said no: exit code and the first lines of its standard error. */
  | { readonly kind: 'failed'; readonly command: string; readonly exitCode: number | null; readonly message: string }
  | { readonly kind: 'timeout'; readonly command: string; readonly message: string }
  | { readonly kind: 'too-large'; readonly command: string; readonly message: string };

export type ToolResult = { readonly ok: true; readonly stdout: string; readonly stderr: string } | { readonly ok: false; readonly problem: ToolProblem };

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024;
/** Standard error kept for the message: tools print a usage text or a Go stack on some failures. */
const MAX_STDERR = 64 * 1024;
const STDERR_LINES = 5;

export function runTool(run: ToolRun): Promise<ToolResult> {
  const timeoutMs = run.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxOutput = run.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const shown = [run.command, ...run.args].join(' ');
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: ToolResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(run.command, [...run.args], { cwd: run.cwd, env: run.env ?? process.env, shell: false, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    } catch (error) {
      // Invalid arguments (a NUL byte in a path) throw synchronously.
      resolve({ ok: false, problem: { kind: 'failed', command: run.command, exitCode: null, message: `${shown} could not be started: ${messageOf(error)}` } });
      return;
    }
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish({ ok: false, problem: { kind: 'timeout', command: run.command, message: `${shown} did not finish within ${Math.round(timeoutMs / 1000)} s` } });
    }, timeoutMs);
    timer.unref?.();
    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxOutput) {
        child.kill('SIGKILL');
        finish({ ok: false, problem: { kind: 'too-large', command: run.command, message: `${shown} printed more than ${Math.round(maxOutput / 1024 / 1024)} MiB: not read` } });
        return;
      }
      stdout.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (errBytes < MAX_STDERR) stderr.push(chunk.subarray(0, MAX_STDERR - errBytes));
      errBytes += chunk.length;
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'EACCES') {
        finish({ ok: false, problem: { kind: 'not-installed', command: run.command, message: `${run.command} is not installed or cannot be run (${error.code})` } });
      } else {
        finish({ ok: false, problem: { kind: 'failed', command: run.command, exitCode: null, message: `${shown} could not be started: ${error.message}` } });
      }
    });
    child.on('close', (code) => {
      const err = Buffer.concat(stderr).toString('utf8');
      if (code === 0) {
        finish({ ok: true, stdout: Buffer.concat(stdout).toString('utf8'), stderr: err });
        return;
      }
      const lines = err.split('\n').map((l) => l.trimEnd()).filter(Boolean).slice(0, STDERR_LINES);
      finish({ ok: false, problem: { kind: 'failed', command: run.command, exitCode: code, message: lines.length > 0 ? lines.join('\n') : `${shown} failed (exit ${code})` } });
    });
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
