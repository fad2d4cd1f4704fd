// `npm run test:vscode`: the issue-6 scenarios in desktop VS Code through @vscode/test-electron, for
// machines that can download VS Code (this one cannot; test/e2e runs the same scenarios in
// code-server). It installs the packaged dist/kube-conflict-hints.vsix into a fresh extensions folder,
// bundles suite.ts and runs it inside VS Code against the local kube-apiserver (started if needed).
//
//   npm run test:vscode                       VS Code 1.100.3, downloaded to .vscode-test/
//   KCH_VSCODE_VERSION=stable npm run test:vscode
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { downloadAndUnzipVSCode, resolveCliArgsFromVSCodeExecutablePath, runTests } from '@vscode/test-electron';
import * as esbuild from 'esbuild';

const root = path.resolve(import.meta.dirname, '..', '..');
const vsix = path.join(root, 'dist', 'kube-conflict-hints.vsix');

function clusterEnv(): Record<string, string> {
  if (process.env.KCH_KUBECONFIG && fs.existsSync(process.env.KCH_KUBECONFIG)) {
    return {
      KCH_KUBECONFIG: process.env.KCH_KUBECONFIG,
      KCH_AUDIT_LOG: process.env.KCH_AUDIT_LOG ?? '',
      KCH_SERVER: process.env.KCH_SERVER ?? '',
    };
  }
  const up = spawnSync('node', ['--import', 'tsx', 'test/support/cluster-cli.ts', 'up'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (up.status !== 0) throw new Error('test:vscode: the local kube-apiserver did not start (npm run cluster:up)');
  const info = JSON.parse(fs.readFileSync(path.join(root, '.cache', 'cluster', 'env.json'), 'utf8')) as {
    kubeconfig: string;
    auditLog: string;
    server: string;
  };
  return { KCH_KUBECONFIG: info.kubeconfig, KCH_AUDIT_LOG: info.auditLog, KCH_SERVER: info.server };
}

async function main(): Promise<void> {
  if (!fs.existsSync(vsix)) throw new Error('test:vscode: no dist/kube-conflict-hints.vsix (npm run package)');
  const suite = path.join(import.meta.dirname, 'out', 'suite.js');
  await esbuild.build({
    entryPoints: [path.join(import.meta.dirname, 'suite.ts')],
    outfile: suite,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['vscode'],
    logLevel: 'warning',
  });

  const vscodeExecutablePath = await downloadAndUnzipVSCode(process.env.KCH_VSCODE_VERSION ?? '1.100.3');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-vscode-'));
  const userDataDir = path.join(scratch, 'user-data');
  const extensionsDir = path.join(scratch, 'extensions');
  const workspace = path.join(scratch, 'workspace');
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(
    path.join(userDataDir, 'User', 'settings.json'),
    JSON.stringify({ 'security.workspace.trust.enabled': false, 'workbench.startupEditor': 'none' }),
  );
  try {
    const [cli, ...cliArgs] = resolveCliArgsFromVSCodeExecutablePath(vscodeExecutablePath);
    const install = spawnSync(
      cli as string,
      [...cliArgs, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--install-extension', vsix],
      { stdio: 'inherit' },
    );
    if (install.status !== 0) throw new Error(`test:vscode: installing the .vsix failed (exit ${install.status})`);
    await runTests({
      vscodeExecutablePath,
      extensionDevelopmentPath: path.join(import.meta.dirname, 'host'),
      extensionTestsPath: suite,
      extensionTestsEnv: { ...clusterEnv(), KCH_WORKSPACE: workspace },
      launchArgs: [
        workspace,
        '--user-data-dir',
        userDataDir,
        '--extensions-dir',
        extensionsDir,
        '--disable-workspace-trust',
      ],
    });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
