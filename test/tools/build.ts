// `node --import tsx test/tools/build.ts`: builds Helm 4, Helm 3 and kustomize for the tests unless
// they are current (scripts/test.mjs runs it before every test run). Prints `KCH_…=path` lines;
// progress goes to stderr, and a failure is one line (no stack trace) with exit 1.
import { ensureTools, ToolBuildError } from './tools';
import { ClusterError } from '../support/cluster';

ensureTools().then(
  (tools) => {
    for (const t of tools) process.stdout.write(`${t.envVar}=${t.path}\n`);
  },
  (e: unknown) => {
    if (e instanceof ToolBuildError || e instanceof ClusterError) {
      process.stderr.write(`tools: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  },
);
