// Language server entry. The transport (stdio or IPC, as the client chose) and everything else
// protocol-related live in lsp/, the only folder that knows about LSP.
//
// `kube-conflict-hints lsp --stdio` (the command line, for editors other than VS Code) loads this
// same bundle and says so with --standalone: see ServerOptions for what that changes.
import { startProcessServer } from './lsp/server';

startProcessServer({ standalone: process.argv.includes('--standalone') });
