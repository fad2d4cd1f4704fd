// Bundles the extension client, the language server and the command-line check into one
// CommonJS file each. VS Code loads client.js; the client starts server.js; `bin` points at cli.js.
//
//   node scripts/bundle.mjs [--production] [--only=cli,server] [--outdir=dist]
import * as esbuild from 'esbuild';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const production = process.argv.includes('--production');
const outdir = path.resolve(root, arg('outdir') ?? 'dist');
const only = arg('only')?.split(',');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
};

const bundles = {
  client: { entryPoints: ['client/src/extension.ts'], external: ['vscode'] },
  server: { entryPoints: ['server/src/main.ts'] },
  cli: { entryPoints: ['server/src/cli/main.ts'], banner: { js: '#!/usr/bin/env node' } },
};

await Promise.all(
  Object.entries(bundles)
    .filter(([name]) => !only || only.includes(name))
    .map(([name, options]) =>
      esbuild.build({
        ...common,
        ...options,
        entryPoints: options.entryPoints.map((e) => path.join(root, e)),
        outfile: path.join(outdir, `${name}.js`),
      }),
    ),
);
