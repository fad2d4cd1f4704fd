// `node --import tsx test/support/cluster-cli.ts up|down|status|build` (npm run cluster:up / cluster:down).
// `up` prints the kubeconfig path as its last stdout line; progress and errors go to stderr, and a
// failure is one line (no stack trace) with a non-zero exit.
import { ClusterError, down, ensureBinaries, status, up, withClusterLock } from './cluster';

async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case 'up': {
      const env = await withClusterLock(up);
      process.stdout.write(`server: ${env.server}\naudit log: ${env.auditLog}\n${env.kubeconfig}\n`);
      return 0;
    }
    case 'down':
      await withClusterLock(down);
      return 0;
    case 'status': {
      const s = await status();
      process.stdout.write(s.running ? `running at ${s.server}\n${s.kubeconfig}\n` : 'not running\n');
      return s.running ? 0 : 3;
    }
    case 'build':
      await ensureBinaries();
      return 0;
    default:
      process.stderr.write('usage: cluster-cli.ts up|down|status|build\n');
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof ClusterError) {
      process.stderr.write(`cluster: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  },
);
