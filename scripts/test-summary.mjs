// A node:test reporter for scripts/test.mjs: after the run, counts the tests of the product apart
// from the checks of the test harness and of the API server itself, so a passing count means what
// it says. Harness checks: every test under test/harness/ (the local kube-apiserver, the audit log,
// the seeded histories) and every test whose name, or whose suite's name, starts with `harness:`.
import * as path from 'node:path';

const HARNESS_DIRS = [`${path.sep}test${path.sep}harness${path.sep}`];

export default async function* summary(source) {
  const counts = { product: newCount(), harness: newCount() };
  const stacks = new Map(); // file -> names of the open suites, by nesting
  for await (const event of source) {
    const data = event.data ?? {};
    const file = data.file ?? '';
    if (event.type === 'test:start') {
      const stack = stacks.get(file) ?? [];
      stack.length = data.nesting;
      stack.push(data.name);
      stacks.set(file, stack);
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (data.details?.type === 'suite') continue; // count tests, not the suites that hold them
    if (data.nesting === 0 && /\.test\.[cm]?[jt]s$/.test(data.name ?? '')) continue; // a file's own entry
    const ancestors = (stacks.get(file) ?? []).slice(0, data.nesting);
    const harness =
      HARNESS_DIRS.some((d) => file.includes(d)) || [...ancestors, data.name].some((n) => /^harness:/.test(String(n)));
    const c = counts[harness ? 'harness' : 'product'];
    if (data.skip) c.skipped++;
    else if (data.todo) c.todo++;
    else if (event.type === 'test:pass') c.passed++;
    else c.failed++;
  }
  const line = (label, c) =>
    `${label}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped${c.todo ? `, ${c.todo} todo` : ''}`;
  yield `\n${line('product tests', counts.product)}\n${line('harness and API-server checks', counts.harness)}\n`;
}

function newCount() {
  return { passed: 0, failed: 0, skipped: 0, todo: 0 };
}
