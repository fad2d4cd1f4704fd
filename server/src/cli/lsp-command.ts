// `kube-conflict-hints lsp --stdio`: the language server the VS Code extension runs, for Neovim,
// Helix, Zed, Emacs, JetBrains and any other LSP client. It is the same bundle (dist/server.js,
// beside dist/cli.js): the command line only starts it, so the command line itself never depends on
// the language server's code, and the two bundles are not shipped twice inside each other.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const lspUsage = `Usage:
  kube-conflict-hints lsp [--stdio]

Runs the language server on stdin/stdout (the only transport offered; --stdio may be given or left
out, as the editor prefers). Settings arrive from the editor (initializationOptions,
workspace/didChangeConfiguration or workspace/configuration, section "kubeConflictHints"); without
any, the kubeconfig is KUBECONFIG's (then ~/.kube/config) and its current context. An editor that
sends initializationOptions { "clusterAccess": false } (or any clusterAccess but true) gets no
cluster access. See docs/editors.md.
`;

export type LspStart =
  { ok: true; start: () => Promise<never> } | { ok: false; message: string } | { ok: true; help: string };

export function languageServerCommand(args: readonly string[], bundleDir: string): LspStart {
  for (const arg of args) {
    if (arg === '--help' || arg === '-h') return { ok: true, help: lspUsage };
    if (arg !== '--stdio')
      return {
        ok: false,
        message: `lsp: unknown option ${JSON.stringify(arg)}: the server speaks over stdio only (see lsp --help)`,
      };
  }
  const bundle = path.join(bundleDir, 'server.js');
  if (!fs.existsSync(bundle))
    return {
      ok: false,
      message: `lsp: the language server is missing beside the command (${bundle}); build it with npm run build`,
    };
  return {
    ok: true,
    start: () => {
      // The server reads its transport (and --standalone, see lsp/server.ts) from the command line.
      process.argv = [process.argv[0] ?? process.execPath, bundle, '--stdio', '--standalone'];
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle's path is known only at run time
      require(bundle);
      // The server owns the process from here and exits it when the editor says `exit`.
      return new Promise<never>(() => {});
    },
  };
}
