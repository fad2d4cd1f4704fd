// Language server entry. The transport (stdio or IPC, as the client chose) and everything else
// protocol-related live in lsp/, the only folder that knows about LSP.
import { startProcessServer } from './lsp/server';

startProcessServer();
