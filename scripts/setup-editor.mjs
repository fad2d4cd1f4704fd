#!/usr/bin/env node
// Prepares the real editor the end-to-end tests drive: code-server (VS Code 1.100.3 served over HTTP)
// and Debian's Chromium. @vscode/test-electron downloads VS Code at run time, which these machines
// cannot do; code-server installs from the npm registry (test/e2e/README.md says how).
//
// Idempotent and cached under .cache/editor/: every finished step is recorded in stamp.json together
// with the versions it was built for, so a second run only checks and takes seconds. A change of
// code-server, Node or of this recipe starts the install again from scratch.
//
//   node scripts/setup-editor.mjs           install what is missing
//   node scripts/setup-editor.mjs --check   exit 0 when ready, 1 otherwise; installs nothing
//
// On success it writes .cache/editor/env.json ({ codeServerEntry, chromium, ... }) for the harness.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const CODE_SERVER_VERSION = '4.100.3';
// Bump when the steps below change, so existing caches are rebuilt.
const RECIPE = 1;
const APT_PACKAGES = [
  'libkrb5-dev',
  'libxkbfile-dev',
  'libsecret-1-dev',
  'pkg-config',
  'libx11-dev',
  'ripgrep',
  'chromium',
];
const CHROMIUM = '/usr/bin/chromium';
const RIPGREP = '/usr/bin/rg';

const root = path.resolve(import.meta.dirname, '..');
const cacheDir = path.join(root, '.cache', 'editor');
const logDir = path.join(cacheDir, 'logs');
const stampFile = path.join(cacheDir, 'stamp.json');
const envFile = path.join(cacheDir, 'env.json');
const installDir = path.join(cacheDir, 'code-server');
const codeServerDir = path.join(installDir, 'node_modules', 'code-server');
const vscodeDir = path.join(codeServerDir, 'lib', 'vscode');
const codeServerEntry = path.join(codeServerDir, 'out', 'node', 'entry.js');

const wanted = { codeServer: CODE_SERVER_VERSION, node: process.version, recipe: RECIPE };
const checkOnly = process.argv.includes('--check');
const started = Date.now();

let stepInProgress = false;

function fail(message) {
  if (stepInProgress) process.stdout.write('failed\n');
  console.error(`setup-editor: ${message}`);
  process.exit(1);
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function readStamp() {
  const stamp = readJson(stampFile);
  const sameVersions = stamp && Object.entries(wanted).every(([key, value]) => stamp[key] === value);
  return sameVersions ? stamp : { ...wanted, done: [] };
}

function writeStamp(stamp) {
  fs.writeFileSync(stampFile, JSON.stringify(stamp, null, 2) + '\n');
}

/** Runs a command with its output in a log file; a failure is one line naming the step and the log. */
function run(step, cmd, args, options = {}) {
  const log = path.join(logDir, `${step}.log`);
  fs.appendFileSync(log, `\n$ (cd ${options.cwd ?? root} && ${cmd} ${args.join(' ')})\n`);
  const fd = fs.openSync(log, 'a');
  const result = spawnSync(cmd, args, {
    cwd: root,
    ...options,
    env: {
      ...process.env,
      npm_config_unsafe_perm: 'true',
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      ...options.env,
    },
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  if (result.status !== 0) {
    const why = result.error ? result.error.message : `exit ${result.status ?? result.signal}`;
    fail(`step "${step}" failed: \`${cmd} ${args.join(' ')}\` (${why}); log: ${path.relative(root, log)}`);
  }
}

function isInstalled(pkg) {
  const result = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return result.status === 0 && result.stdout.includes('install ok installed');
}

function missingAptPackages() {
  return APT_PACKAGES.filter((pkg) => !isInstalled(pkg));
}

function ensureAptPackages() {
  const missing = missingAptPackages();
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0)
    fail(
      `missing Debian packages (${missing.join(' ')}); install them as root: apt-get install -y ${missing.join(' ')}`,
    );
  console.log(`setup-editor: installing Debian packages: ${missing.join(' ')}`);
  run('apt', 'apt-get', ['update']);
  run('apt', 'apt-get', ['install', '-y', '--no-install-recommends', ...missing], {
    env: { DEBIAN_FRONTEND: 'noninteractive' },
  });
  const stillMissing = missingAptPackages();
  if (stillMissing.length) fail(`apt-get did not install: ${stillMissing.join(' ')}; log: .cache/editor/logs/apt.log`);
}

// The steps after the Debian packages, in order. Each is recorded in the stamp when it finishes, so
// an interrupted setup resumes where it stopped.
const steps = [
  {
    name: 'code-server',
    what: `npm install code-server@${CODE_SERVER_VERSION}`,
    run() {
      fs.rmSync(installDir, { recursive: true, force: true });
      fs.mkdirSync(installDir, { recursive: true });
      // A package.json of its own keeps npm from walking up into the project's node_modules.
      fs.writeFileSync(
        path.join(installDir, 'package.json'),
        JSON.stringify({ name: 'kch-editor', private: true }, null, 2) + '\n',
      );
      // code-server's postinstall refuses root without unsafe_perm, and a nested postinstall downloads
      // ripgrep from GitHub; skip scripts and do their work in the steps below.
      run('code-server', 'npm', ['install', '--ignore-scripts', '--no-save', `code-server@${CODE_SERVER_VERSION}`], {
        cwd: installDir,
      });
    },
  },
  {
    name: 'vscode-deps',
    what: 'npm install the dependencies of lib/vscode',
    run() {
      run('vscode-deps', 'npm', ['install', '--omit=dev', '--ignore-scripts'], { cwd: vscodeDir });
    },
  },
  {
    name: 'ripgrep',
    what: `link ${RIPGREP} into @vscode/ripgrep`,
    run() {
      const binDir = path.join(vscodeDir, 'node_modules', '@vscode', 'ripgrep', 'bin');
      fs.mkdirSync(binDir, { recursive: true });
      fs.rmSync(path.join(binDir, 'rg'), { force: true });
      fs.symlinkSync(RIPGREP, path.join(binDir, 'rg'));
    },
  },
  {
    name: 'native-modules',
    what: 'rebuild the native modules of lib/vscode',
    run() {
      run('native-modules', 'npm', ['rebuild', 'kerberos', '@vscode/spdlog', 'native-watchdog', '@vscode/deviceid'], {
        cwd: vscodeDir,
      });
    },
  },
  {
    name: 'node-pty',
    what: 'build node-pty with node-gyp',
    run() {
      run('node-pty', 'npx', ['--yes', 'node-gyp', 'rebuild'], {
        cwd: path.join(vscodeDir, 'node_modules', 'node-pty'),
      });
    },
  },
  {
    name: 'asar-link',
    what: 'link node_modules.asar',
    run() {
      // The server resolves some modules through node_modules.asar, which only the packaged desktop
      // build ships.
      const link = path.join(vscodeDir, 'node_modules.asar');
      fs.rmSync(link, { force: true });
      fs.symlinkSync('node_modules', link);
    },
  },
  {
    name: 'builtin-extensions',
    what: 'npm install the dependencies of the built-in extensions',
    run() {
      run('builtin-extensions', 'npm', ['install', '--omit=dev', '--ignore-scripts'], {
        cwd: path.join(vscodeDir, 'extensions'),
      });
    },
  },
  {
    name: 'argon2',
    what: 'rebuild argon2',
    run() {
      run('argon2', 'npm', ['rebuild', 'argon2'], { cwd: installDir });
    },
  },
  {
    name: 'smoke',
    what: 'code-server --version',
    run() {
      // Its own config folder: code-server writes a default config.yaml on first start.
      const home = path.join(cacheDir, 'smoke-home');
      run('smoke', 'node', [codeServerEntry, '--version'], { env: { XDG_CONFIG_HOME: home, XDG_DATA_HOME: home } });
    },
  },
];

function writeEnv() {
  const env = {
    codeServerVersion: CODE_SERVER_VERSION,
    codeServerEntry,
    chromium: CHROMIUM,
    nodeVersion: process.version,
  };
  fs.writeFileSync(envFile, JSON.stringify(env, null, 2) + '\n');
}

function isReady() {
  const stamp = readStamp();
  return (
    missingAptPackages().length === 0 &&
    steps.every((step) => stamp.done.includes(step.name)) &&
    fs.existsSync(codeServerEntry) &&
    fs.existsSync(envFile)
  );
}

if (checkOnly) {
  const ready = isReady();
  console.log(`setup-editor: ${ready ? 'ready' : 'not ready: run node scripts/setup-editor.mjs'}`);
  process.exit(ready ? 0 : 1);
}

fs.mkdirSync(logDir, { recursive: true });
ensureAptPackages();
const stamp = readStamp();
if (!stamp.done.includes(steps[0].name) || !fs.existsSync(codeServerEntry)) stamp.done = [];
for (const step of steps) {
  if (stamp.done.includes(step.name)) continue;
  const stepStarted = Date.now();
  process.stdout.write(`setup-editor: ${step.what} ... `);
  fs.rmSync(path.join(logDir, `${step.name}.log`), { force: true });
  stepInProgress = true;
  step.run();
  stepInProgress = false;
  console.log(`${((Date.now() - stepStarted) / 1000).toFixed(1)}s`);
  stamp.done.push(step.name);
  writeStamp(stamp);
}
writeEnv();
console.log(
  `setup-editor: code-server ${CODE_SERVER_VERSION} and ${CHROMIUM} ready (${((Date.now() - started) / 1000).toFixed(1)}s)`,
);
