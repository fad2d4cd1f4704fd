// Scalars read as kubectl reads them, next to plain YAML 1.2, from test/fixtures/manifest/scalars.txt.
// The kubectl column is checked against the real kubectl binary (`kubectl label --local` decodes a
// manifest exactly as `kubectl apply` does, without a cluster).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parse as parseYaml12 } from 'yaml';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { ruleFor } from '../../../../server/src/core/findings';

interface ScalarCase {
  readonly place: 'value' | 'key';
  readonly written: string;
  readonly kubectl: unknown;
  readonly yaml12: unknown;
  readonly line: number;
}

const ERROR = Symbol('error');
const tablePath = path.join(import.meta.dirname, '../../../fixtures/manifest/scalars.txt');

function readTable(): ScalarCase[] {
  return fs
    .readFileSync(tablePath, 'utf8')
    .split('\n')
    .map((text, i) => ({ text, line: i + 1 }))
    .filter(({ text }) => text.trim() !== '' && !text.startsWith('#'))
    .map(({ text, line }) => {
      const [place, written, kubectl, yaml12] = text.split('|').map((c) => c.trim());
      const json = (c: string | undefined) => (c === 'error' ? ERROR : JSON.parse(c!));
      assert.ok(place === 'value' || place === 'key', `scalars.txt:${line}: bad place`);
      return { place, written: written!, kubectl: json(kubectl), yaml12: json(yaml12), line };
    });
}

/** A ConfigMap-shaped document with the scalar at `x.v`, or as a key of `x` whose value is `marker`. */
function documentFor(c: ScalarCase): string {
  const body = c.place === 'value' ? `  v: ${c.written}` : `  ${c.written}: marker`;
  return `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: scalars}\nx:\n${body}\n`;
}

function pick(c: ScalarCase, x: unknown): unknown {
  const obj = x as Record<string, unknown>;
  if (c.place === 'value') return obj.v;
  return Object.keys(obj).find((k) => obj[k] === 'marker');
}

const cases = readTable();

// The product: the manifest parser reads every scalar as kubectl does.
for (const c of cases) {
  test(`kubectl reads ${c.place} ${JSON.stringify(c.written)} as ${c.kubectl === ERROR ? 'an error' : JSON.stringify(c.kubectl)}`, () => {
    const parsed = parseManifestText(documentFor(c));
    if (c.kubectl === ERROR) {
      assert.equal(parsed.resources.length, 0, 'a document kubectl refuses gives no resource');
      const problem = parsed.problems.find((p) => ruleFor(p.code).severity === 'error');
      assert.ok(problem, 'the refusal is reported as a problem');
      assert.equal(problem.range.start.line, 4, 'on the line of the scalar');
      return;
    }
    assert.equal(parsed.problems.length, 0, JSON.stringify(parsed.problems));
    assert.deepEqual(pick(c, parsed.resources[0]!.object.x), c.kubectl);
  });
}

// Not the product: the `yaml` package and the table itself. Counted as harness checks (the names
// start with `harness:`, see scripts/test.mjs).
describe('harness: what a plain YAML 1.2 reader (the yaml package) reads, for contrast', () => {
  for (const c of cases) {
    test(`plain YAML 1.2 reads ${c.place} ${JSON.stringify(c.written)} as ${c.yaml12 === ERROR ? 'an error' : JSON.stringify(c.yaml12)}`, () => {
      let value: unknown = ERROR;
      try {
        const doc = parseYaml12(documentFor(c), { prettyErrors: false });
        value = pick(c, doc.x);
        if (typeof value === 'number' && !Number.isFinite(value))
          value = ERROR; // JSON cannot hold it
        else if (value instanceof Uint8Array) value = new TextDecoder().decode(value);
        else if (value !== ERROR) value = JSON.parse(JSON.stringify(value ?? null));
      } catch {
        value = ERROR;
      }
      assert.deepEqual(value, c.yaml12);
    });
  }
});

test('harness: the scalar table covers both places and the interesting differences', () => {
  assert.ok(cases.length >= 40);
  assert.ok(cases.filter((c) => c.place === 'key').length >= 5);
  const differing = cases.filter((c) => JSON.stringify(c.kubectl) !== JSON.stringify(c.yaml12));
  assert.ok(differing.length >= 15, 'the table shows where kubectl and YAML 1.2 disagree');
});

function kubectlAvailable(): boolean {
  return spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
}

test('harness: the kubectl column is what the real kubectl reads', (t) => {
  if (!kubectlAvailable()) {
    if (process.env.CI === 'true') throw new Error('kubectl is not installed');
    t.skip('kubectl is not installed');
    return;
  }
  const mismatches: string[] = [];
  for (const c of cases) {
    const run = spawnSync('kubectl', ['label', '--local', '-f', '-', 'checked=yes', '-o', 'json'], {
      input: documentFor(c),
      encoding: 'utf8',
      // No kubeconfig: --local never contacts a cluster, and must not read the user's config.
      env: { ...process.env, KUBECONFIG: '/dev/null' },
    });
    const got = run.status === 0 ? pick(c, JSON.parse(run.stdout).x) : ERROR;
    if (!(got === ERROR ? c.kubectl === ERROR : JSON.stringify(got) === JSON.stringify(c.kubectl))) {
      mismatches.push(
        `scalars.txt:${c.line} ${c.place} ${c.written}: kubectl reads ${got === ERROR ? 'an error' : JSON.stringify(got)}`,
      );
    }
  }
  assert.deepEqual(mismatches, []);
});
