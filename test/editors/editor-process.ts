// A real editor run headless with a driver script: started with its environment, its stderr kept,
// killed if it has not ended long after the script's own waits would have given up.
import { spawn } from 'node:child_process';

/** Runs `command args` to its end and gives back what it wrote on stderr. */
export function runEditor(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 220_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(err);
    });
  });
}
