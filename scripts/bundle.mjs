// Bundles the extension client, the language server and the command-line check into one
// CommonJS file each under dist/. VS Code loads dist/client.js; the client starts dist/server.js.
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
};

await Promise.all([
  esbuild.build({ ...common, entryPoints: ['client/src/extension.ts'], outfile: 'dist/client.js', external: ['vscode'] }),
  esbuild.build({ ...common, entryPoints: ['server/src/main.ts'], outfile: 'dist/server.js' }),
  esbuild.build({ ...common, entryPoints: ['server/src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } }),
]);
