// Running the user's own rendering tools (kustomize, kubectl kustomize, helm). One way to run them
// for the editor and the command line alike: no shell (arguments are never parsed again), nothing on
// standard input, a time limit, an output limit, a memory limit, and an answer as plain data that
// never throws.
//
// Whether a tool may run at all is decided above this layer: the editor runs one only in a trusted
// workspace, with a binary the user (not the workspace) chose. Which file runs is decided here, and
// never by the folder being checked: a bare name is looked up on PATH by this code, in absolute
// entries only and never inside the checked folders (an empty or relative entry would otherwise
// resolve against the render's folder, the repository's own). Each run is a process group of its
// own, ended as a whole: a wrapper's children, or the `git fetch` of a remote base, never outlive it.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ToolRun {
  /** The program: a path (a relative one is the user's, from this process's folder), or a name looked up on PATH. */
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Default 60 s: `helm template` of a chart with dependencies takes seconds, never minutes. */
  readonly timeoutMs?: number;
  /** Default 16 MiB, the largest file the command line reads. */
  readonly maxOutputBytes?: number;
  /** The data segment the tool and its children may have (RLIMIT_DATA); default `toolMemoryLimit`. */
  readonly maxMemoryBytes?: number;
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Folders a program named by a bare name is never taken from (the checked workspace); `cwd` is
   * always one of them.
   */
  readonly untrusted?: readonly string[];
}

export type ToolProblem =
  /** The program is not there (ENOENT) or may not be run (EACCES). */
  | { readonly kind: 'not-installed'; readonly command: string; readonly message: string }
  /** It ran and said no: exit code and the first lines of its standard error. */
  | { readonly kind: 'failed'; readonly command: string; readonly exitCode: number | null; readonly message: string }
  | { readonly kind: 'timeout'; readonly command: string; readonly message: string }
  | { readonly kind: 'too-large'; readonly command: string; readonly message: string };

export type ToolResult =
  | {
      readonly ok: true;
      readonly stdout: string;
      readonly stderr: string;
      /** What the user should know about how it ran (it ran without a memory limit). */
      readonly notes: readonly string[];
    }
  | { readonly ok: false; readonly problem: ToolProblem };

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024;
/**
 * The memory a render may take: RLIMIT_DATA, which on Linux (since 4.7) counts every private
 * writable mapping, so Go's heap, and not the address space Go reserves without touching it (which
 * RLIMIT_AS would count). A chart or overlay renders in a few hundred MiB; a hostile one that asks
 * for more fails, with Go's "out of memory", instead of taking the machine.
 */
export const toolMemoryLimit = 2 * 1024 * 1024 * 1024;
/** Standard error kept for the message: tools print a usage text or a Go stack on some failures. */
const MAX_STDERR = 64 * 1024;
const STDERR_LINES = 5;

/** The process groups of the runs still going: ended with this process, whoever ends it. */
const running = new Set<number>();
let endWithProcess = false;

export function runTool(run: ToolRun): Promise<ToolResult> {
  const timeoutMs = run.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxOutput = run.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const shown = [run.command, ...run.args].join(' ');
  const env = run.env ?? process.env;
  const untrusted = [run.cwd, ...(run.untrusted ?? [])];
  const program = resolveProgram(run.command, env.PATH ?? '', untrusted);
  if (!program.ok)
    return Promise.resolve({
      ok: false,
      problem: { kind: 'not-installed', command: run.command, message: program.message },
    });
  const limiter = resolveProgram('prlimit', env.PATH ?? '', untrusted);
  const maxMemory = run.maxMemoryBytes ?? toolMemoryLimit;
  const [file, args] = limiter.ok
    ? [limiter.path, [`--data=${maxMemory}`, '--', program.path, ...run.args]]
    : [program.path, [...run.args]];
  const notes = limiter.ok
    ? []
    : [`${path.basename(run.command)} ran without a memory limit: prlimit (util-linux) was not found on PATH`];
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
      // A group of its own (detached), so that the whole group can be ended, not only this child.
      child = spawn(file, args, {
        cwd: run.cwd,
        env,
        shell: false,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      // Invalid arguments (a NUL byte in a path) throw synchronously.
      resolve({
        ok: false,
        problem: {
          kind: 'failed',
          command: run.command,
          exitCode: null,
          message: `${shown} could not be started: ${messageOf(error)}`,
        },
      });
      return;
    }
    const group = child.pid;
    if (group !== undefined) watchGroup(group);
    const end = () => {
      if (group !== undefined) endGroup(group);
    };
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    const timer = setTimeout(() => {
      end();
      finish({
        ok: false,
        problem: {
          kind: 'timeout',
          command: run.command,
          message: `${shown} did not finish within ${Math.round(timeoutMs / 1000)} s`,
        },
      });
    }, timeoutMs);
    timer.unref?.();
    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxOutput) {
        end();
        finish({
          ok: false,
          problem: {
            kind: 'too-large',
            command: run.command,
            message: `${shown} printed more than ${Math.round(maxOutput / 1024 / 1024)} MiB: not read`,
          },
        });
        return;
      }
      stdout.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (errBytes < MAX_STDERR) stderr.push(chunk.subarray(0, MAX_STDERR - errBytes));
      errBytes += chunk.length;
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      end();
      if (error.code === 'ENOENT' || error.code === 'EACCES') {
        finish({
          ok: false,
          problem: {
            kind: 'not-installed',
            command: run.command,
            message: `${run.command} is not installed or cannot be run (${error.code})`,
          },
        });
      } else {
        finish({
          ok: false,
          problem: {
            kind: 'failed',
            command: run.command,
            exitCode: null,
            message: `${shown} could not be started: ${error.message}`,
          },
        });
      }
    });
    // What the tool leaves running when it exits (a wrapper's background child) ends with it; its
    // output is still read to the end, and the pipes it held close.
    child.on('exit', end);
    child.on('close', (code) => {
      const err = Buffer.concat(stderr).toString('utf8');
      if (code === 0) {
        finish({ ok: true, stdout: Buffer.concat(stdout).toString('utf8'), stderr: err, notes });
        return;
      }
      const lines = err
        .split('\n')
        .map((l) => l.trimEnd())
        .filter(Boolean)
        .slice(0, STDERR_LINES);
      const memory =
        limiter.ok && /out of memory|cannot allocate memory/i.test(err)
          ? ` (it reached its memory limit of ${Math.round(maxMemory / 1024 / 1024)} MiB)`
          : '';
      finish({
        ok: false,
        problem: {
          kind: 'failed',
          command: run.command,
          exitCode: code,
          message: `${lines.length > 0 ? lines.join('\n') : `${shown} failed (exit ${code})`}${memory}`,
        },
      });
    });
  });
}

/**
 * The file a command names: a path as the user wrote it (relative to this process's folder, never
 * to the render's), or a bare name found on PATH as a shell would find it, except that only
 * absolute entries are searched and a file inside an untrusted folder is passed over. So neither an
 * empty entry (`PATH=:/usr/bin`, which means "the current folder") nor `.` nor `node_modules/.bin`
 * can make a render run a program the checked repository holds.
 */
export function resolveProgram(
  command: string,
  searchPath: string,
  untrusted: readonly string[] = [],
): { ok: true; path: string } | { ok: false; message: string } {
  if (command.includes('/') || (path.sep !== '/' && command.includes(path.sep))) {
    const named = path.resolve(command);
    return isExecutableFile(named)
      ? { ok: true, path: named }
      : { ok: false, message: `${command} is not installed or cannot be run (not an executable file)` };
  }
  const inside = untrusted.map(realOrResolved);
  let skipped = 0;
  for (const entry of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(entry)) {
      skipped++;
      continue;
    }
    const candidate = path.join(entry, command);
    if (!isExecutableFile(candidate)) continue;
    const real = realOrResolved(candidate);
    if (inside.some((dir) => real === dir || real.startsWith(`${dir}${path.sep}`))) {
      skipped++;
      continue;
    }
    return { ok: true, path: candidate };
  }
  return {
    ok: false,
    message: `${command} is not installed or cannot be run (not found on PATH${skipped > 0 ? '; relative PATH entries and the checked folders are not searched' : ''})`,
  };
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function realOrResolved(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function watchGroup(group: number): void {
  running.add(group);
  if (endWithProcess) return;
  endWithProcess = true;
  // A render in a detached group does not hear the terminal's Ctrl-C: it ends when this process does.
  process.once('exit', () => {
    for (const g of running) endGroup(g);
  });
}

/**
 * SIGKILL to every process of the group, once: after that its number may be another's. A group
 * that is gone already is no problem.
 */
function endGroup(group: number): void {
  if (!running.delete(group)) return;
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // ESRCH: nothing of it is left.
  }
}

/** What a render's settings say about how its tools run. */
export function toolOptions(settings: {
  readonly timeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  readonly workspace?: string;
}): Pick<ToolRun, 'timeoutMs' | 'env' | 'untrusted'> {
  return {
    ...(settings.timeoutMs ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.env ? { env: settings.env } : {}),
    ...(settings.workspace !== undefined ? { untrusted: [settings.workspace] } : {}),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
