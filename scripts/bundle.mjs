// Bundles the extension client, the language server and the command-line check into CommonJS files.
// VS Code loads client.js; the client starts server.js; `bin` points at cli.js, whose `lsp` command
// loads server.js; server.js and cli.js each start their bundle (server-bundle.js, cli-bundle.js). Every dependency is inside the bundles (only Node's own
// modules stay outside), which is why the published package has no runtime dependencies: installing
// it downloads nothing else.
//
//   node scripts/bundle.mjs [--production] [--only=cli,server] [--outdir=dist]
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const production = process.argv.includes('--production');
const outdir = path.resolve(root, arg('outdir') ?? 'dist');
const only = arg('only')?.split(',');

// @kubernetes/client-node's KubeConfig (kubeconfig files, contexts, every auth provider) imports the
// library's generated API client only for makeApiClient, which the product never calls: it sends
// its own requests (server/src/cluster/http.ts). Without this, every generated API and model class
// is compiled and evaluated at each start, for nothing. The stand-in fails loudly if it is ever used.
const withoutGeneratedClient = {
  name: 'without-generated-client',
  setup(build) {
    build.onResolve({ filter: /^\.\/gen\/index\.js$/ }, (args) =>
      /[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/.test(args.importer)
        ? { path: 'generated-client', namespace: 'kch-stub' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'kch-stub' }, () => ({
      contents:
        "const unused = () => { throw new Error('the generated Kubernetes API client is not bundled: use server/src/cluster/http.ts'); };\n" +
        'export const createConfiguration = unused;\nexport class ServerConfiguration { constructor() { unused(); } }\n',
      loader: 'js',
    }));
  },
};

// What KubeConfig imports only for uses that are rare (a SOCKS proxy-url) or never the product's
// (applyToFetchOptions' Headers): each is a stand-in that loads the real module when first used,
// so a start does not evaluate node-fetch, whatwg-url and its Unicode tables, socks and ip-address.
const lazyShims = {
  'socks-proxy-agent':
    "export class SocksProxyAgent { constructor(...args) { const { SocksProxyAgent: Real } = require('socks-proxy-agent'); return new Real(...args); } }\n",
  'node-fetch':
    "export class Headers { constructor(...args) { const { Headers: Real } = require('node-fetch'); return new Real(...args); } }\n",
};
const lazyWhenRare = {
  name: 'lazy-when-rare',
  setup(build) {
    build.onResolve({ filter: /^(socks-proxy-agent|node-fetch)$/ }, (args) =>
      /[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/.test(args.importer)
        ? { path: args.path, namespace: 'kch-lazy', pluginData: { resolveDir: path.dirname(args.importer) } }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'kch-lazy' }, (args) => ({
      contents: lazyShims[args.path],
      loader: 'js',
      resolveDir: args.pluginData.resolveDir,
    }));
  },
};

// The CEL library builds its registry of functions and types when it is evaluated, a tenth of a
// start that judges no CRD validation rule, which is nearly every start. server/src/core/cel/validate.ts
// makes its environments at the first rule (admission.ts at the first policy expression, and
// libraries.ts only calls Optional while one is evaluated); this stand-in loads the library then.
// What it does not name is a build error, not a stand-in that fails later.
const lazyCel = {
  name: 'lazy-cel',
  setup(build) {
    build.onResolve({ filter: /^@marcbachmann\/cel-js$/ }, (args) =>
      /[\\/]server[\\/]src[\\/]core[\\/]cel[\\/](validate|admission|libraries)\.ts$/.test(args.importer)
        ? { path: args.path, namespace: 'kch-lazy-cel', pluginData: { resolveDir: args.resolveDir } }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'kch-lazy-cel' }, (args) => ({
      contents:
        "const cel = () => require('@marcbachmann/cel-js');\n" +
        'export class Environment { constructor(...args) { return new (cel().Environment)(...args); } }\n' +
        'export const Optional = { of: (value) => cel().Optional.of(value), none: () => cel().Optional.none() };\n',
      loader: 'js',
      resolveDir: args.pluginData.resolveDir,
    }));
  },
};

const common = {
  bundle: true,
  plugins: [withoutGeneratedClient, lazyWhenRare, lazyCel],
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
};

/**
 * The text with every character past ASCII written as its escape. esbuild escapes them in strings
 * and names but not in comments or regular expressions (a `µs` in the Kubernetes client's duration
 * pattern), and one such character makes Node read the whole bundle as a two-byte string: decoded
 * on the slow path and twice the memory, in every process. What remains are comments and that
 * pattern, where `\uXXXX` means the same character (the source map's columns after it, on those
 * few lines, are off by the escape's length).
 */
const ascii = (text) => text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

// The server and the command line are each two files: the entry editors and `bin` name (a few lines,
// server/src/launch/entry.ts) and the bundle it starts through V8's code cache, so that a start
// after the first does not compile the bundle again (server/src/launch/compile-cache.ts).
const entry = 'server/src/launch/entry.ts';
const bundles = {
  client: { entryPoints: ['client/src/extension.ts'], external: ['vscode'] },
  'server-bundle': { entryPoints: ['server/src/main.ts'] },
  server: { entryPoints: [entry], part: 'server' },
  'cli-bundle': { entryPoints: ['server/src/cli/main.ts'] },
  cli: { entryPoints: [entry], banner: { js: '#!/usr/bin/env node' }, part: 'cli' },
};
// --only=cli builds the command line's two files.
const partOf = (name) => bundles[name].part ?? name.replace(/-bundle$/, '');

await Promise.all(
  Object.entries(bundles)
    .filter(([name]) => !only || only.includes(partOf(name)))
    .map(async ([name, { part: _part, ...options }]) => {
      const result = await esbuild.build({
        ...common,
        ...options,
        entryPoints: options.entryPoints.map((e) => path.join(root, e)),
        outfile: path.join(outdir, `${name}.js`),
        write: false,
      });
      // Each file is written beside its place and renamed over it: a language server or a check
      // starting meanwhile (tests run in parallel, `npm pack` rebundles) never reads half a bundle.
      fs.mkdirSync(outdir, { recursive: true });
      for (const file of result.outputFiles) {
        const temporary = `${file.path}.${process.pid}.tmp`;
        fs.writeFileSync(temporary, file.path.endsWith('.js') ? ascii(file.text) : file.contents);
        // The entry `bin` names is run as a program (`npx kube-conflict-hints` in a checkout runs
        // dist/cli.js itself, with no install to set its mode), so it is written executable.
        if (name === 'cli' && file.path.endsWith('.js')) fs.chmodSync(temporary, 0o755);
        fs.renameSync(temporary, file.path);
      }
      if (production) fs.rmSync(path.join(outdir, `${name}.js.map`), { force: true });
    }),
);
