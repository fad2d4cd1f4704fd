// How the entry files, dist/cli.js and dist/server.js (launch/entry.ts), start the bundle beside them
// (dist/cli-bundle.js, dist/server-bundle.js): through V8's code cache, so that every start after
// the first skips compiling the bundle and the functions the first run needed. Compiling is a fixed
// cost of each process, as large as reading 200 manifests (docs/performance.md).
//
// Node 22.1 and later keep such a cache themselves (module.enableCompileCache); on Node 20 this file
// keeps it, with V8's own cachedData (vm.Script), which V8 refuses (and compiles afresh) whenever it
// was made by another V8 or other flags. The cache is bytecode the process will run, so it is only
// read from a directory of this user's that nobody else can write; anything odd about it (missing,
// foreign, unwritable, refused) only means compiling as if there were none.
//
// Which text a cache was made for is in its name, and this is what keeps a cache to its text: V8's
// own check of the text is its length alone (a release V8 verifies no checksum either), so a cache
// of another text of the same length would be taken and run. The name holds the bundle file's
// identity as the kernel keeps it (device, inode, size, mtime and ctime, in nanoseconds), read from
// the descriptor the text is read through, again after the read: any write of the file changes its
// mtime and ctime, a file put in its place is another inode with a ctime of its own, and no process
// can set a ctime but the kernel. That costs two fstat calls where hashing the text cost loading
// node:crypto and going over 1-2 MB twice more, some 15 ms of every start.
//
// Only Node's own modules here: this file runs before the bundle exists in memory.
import * as fs from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { readOwnFile, userCacheDirectory, writeOwnFile } from './user-cache';

/** Where compiled code is kept, or undefined when it should not be (turned off, or not safely ours). */
function compileCacheDirectory(env: NodeJS.ProcessEnv): string | undefined {
  if (env.KCH_COMPILE_CACHE === 'off' || env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  return userCacheDirectory(env, 'compile-cache');
}

/** Writes `file` (NAME-VARIANT-OPTIONS-KEY.v8) and removes the caches of the same name, variant and options made for other texts. */
function writeCache(file: string, data: Buffer): void {
  // Written beside its place and renamed over it: a process starting meanwhile reads all or nothing.
  if (!writeOwnFile(file, data)) return;
  const dir = path.dirname(file);
  const family = path.basename(file).replace(/[0-9a-f]+\.v8$/, '');
  try {
    for (const other of fs.readdirSync(dir)) {
      if (other.startsWith(family) && other.endsWith('.v8') && other !== path.basename(file))
        fs.rmSync(path.join(dir, other), { force: true });
    }
  } catch {
    // Another process may be cleaning up too: an old file left behind costs only its space.
  }
}

/**
 * The bundle's text, and the identity of the file it was read from (see the top of this file); no
 * identity when the file changed while it was read, whose text then gets no cache, read or written.
 */
function readBundle(bundle: string): { source: string; identity?: string } {
  const fd = fs.openSync(bundle, 'r');
  try {
    // Each field as 16 hex digits, so that the name is the identity itself, not a hash of it.
    const identityOf = (stat: fs.BigIntStats) =>
      [stat.dev, stat.ino, stat.size, stat.mtimeNs, stat.ctimeNs]
        .map((n) => BigInt.asUintN(64, n).toString(16).padStart(16, '0'))
        .join('');
    const before = identityOf(fs.fstatSync(fd, { bigint: true }));
    const source = fs.readFileSync(fd, 'utf8');
    return before === identityOf(fs.fstatSync(fd, { bigint: true })) ? { source, identity: before } : { source };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * 8 hex digits naming a text (FNV-1a): for the parts of a name V8 checks again itself (its version,
 * its flags), so that two texts with one name only ever cost a refused cache.
 */
function digest(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** Runs the CommonJS bundle at `bundle` as `require` would, through the compile cache where there is one. */
/**
 * `variant` names the kind of work (a command): its cache is made by a run of that work, so it holds
 * the functions that work compiles, and a quick `--version` first does not leave a cache of almost
 * nothing behind for the checks after it.
 */
export function startBundle(bundle: string, variant = 'default'): void {
  const dir = compileCacheDirectory(process.env);
  const builtIn = (Module as unknown as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
  if (!dir || typeof builtIn === 'function') {
    if (dir) builtIn!(dir);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle's path is known only at run time
    require(bundle);
    return;
  }
  const { source, identity } = readBundle(bundle);
  // Node's options are part of the name: V8 refuses code compiled under other flags, and a server
  // started by the editor (serverExecArgv) and one started by `lsp` in a terminal keep one each.
  const options = digest(process.execArgv.join('\u0000'));
  // The V8 and platform the code is compiled for, and the file its text was read from.
  const key = identity && digest([process.version, process.arch, process.versions.v8].join('\u0000')) + identity;
  const file = key ? path.join(dir, `${path.basename(bundle, '.js')}-${variant}-${options}-${key}.v8`) : undefined;
  const cachedData = file ? readOwnFile(file, 256 << 20) : undefined;
  const script = new vm.Script(Module.wrap(source), { filename: bundle, ...(cachedData ? { cachedData } : {}) });
  if (file && (!cachedData || script.cachedDataRejected)) {
    // Made once the work is done, so it holds every function this run compiled, not only the top.
    let written = false;
    const save = (): void => {
      if (written) return;
      written = true;
      writeCache(file, script.createCachedData());
    };
    process.once('exit', save);
    // A language server may never exit normally: it saves once it has been at work a while.
    setTimeout(save, 20_000).unref();
  }
  // The bundle requires only Node's own modules: a require of its place is all it needs.
  const bundleModule = new Module(bundle, module);
  bundleModule.filename = bundle;
  const run = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: Module,
    filename: string,
    dirname: string,
  ) => void;
  run.call(
    bundleModule.exports,
    bundleModule.exports,
    Module.createRequire(bundle),
    bundleModule,
    bundle,
    path.dirname(bundle),
  );
  bundleModule.loaded = true;
}
