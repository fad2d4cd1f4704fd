// dist/cli.js and dist/server.js: each starts its bundle, dist/cli-bundle.js or
// dist/server-bundle.js, through the compile cache (compile-cache.ts). Nothing else is in these files.
import * as path from 'node:path';
import { startBundle } from './compile-cache';

const name = path.basename(__filename, '.js');
// The command line's commands compile different parts of it: each keeps its own cache.
const command = name === 'cli' ? process.argv[2] : undefined;
const variant = command === 'check' || command === 'snapshot' || command === 'lsp' ? command : 'other';
startBundle(path.join(__dirname, `${name}-bundle.js`), name === 'cli' ? variant : 'server');
