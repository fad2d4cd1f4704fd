// The command line read into plain records (server/src/cli/args.ts): here, the limits of a check of
// several contexts. test/cli/arguments.test.ts drives the rest through the bundled command line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultParallel, parseCommandLine } from '../../../server/src/cli/args';

test('several contexts are checked 16 at once unless --parallel says otherwise, each within 60 s', () => {
  const parsed = parseCommandLine(['check', '--context', 'a', '--context', 'b', 'k8s/']);
  assert.ok(parsed.ok && parsed.command.command === 'check');
  assert.equal(defaultParallel, 16);
  assert.deepEqual(parsed.command.fleet, { names: ['a', 'b'], globs: [], parallel: 16, timeoutSeconds: 60 });
  const four = parseCommandLine(['check', '--contexts', 'prod-*', '--parallel', '4', 'k8s/']);
  assert.ok(four.ok && four.command.command === 'check');
  assert.equal(four.command.fleet?.parallel, 4);
});
