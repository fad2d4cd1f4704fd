// The fuzz campaign through the core, in process: every generated or mutated input is parsed, its
// paths located, analysed against live objects the real API server returned (the captured facts of
// test/fixtures/engine) with the cluster's OpenAPI schema, fixed by every quick fix its findings
// offer, hovered, and its objects shown in the ownership view; reading values first gives what the
// full parse gives. Nothing may throw, no call may take
// more than its budget relative to a plain parse of the same input, and memory must stay bounded.
//
// 20,000 inputs with a fixed seed (about a minute); KCH_FUZZ_ITERATIONS and KCH_FUZZ_SEED run
// longer or other campaigns, KCH_FUZZ_ONLY replays one input (see README.md).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import {
  analyzeResource,
  locateOptions,
  type AnalysisSettings,
  type ResourceFacts,
} from '../../server/src/core/findings';
import {
  applyTextEdits,
  removeFieldEdits,
  removeFieldsInFileEdits,
  replaceValueEdits,
} from '../../server/src/core/manifest/edits';
import { fieldHover, objectHover } from '../../server/src/core/findings/hover-text';
import { isJsonObject, type JsonObject, type JsonValue } from '../../server/src/core/json';
import {
  createManifestCache,
  forEachNode,
  locate,
  locatePathString,
  parseManifestText,
  type ManifestResource,
  type ParsedManifest,
} from '../../server/src/core/manifest/manifest';
import { nodeAt } from '../../server/src/core/findings/ownership';
import { ownershipView } from '../../server/src/core/findings/ownership-view';
import { formatPath } from '../../server/src/core/ssa/path';
import { schemaFromOpenApi } from '../../server/src/core/ssa/schema';
import { CallTimer, collectGarbage, MiB, peakRss, saveFailure } from './budget';
import { campaignSettings, fuzzInput, inputRng, type Rng } from './generate';
import { assertParsesAgree } from '../support/parse-agreement';

const fixtures = path.join(import.meta.dirname, '..', 'fixtures');
const { schema } = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json', 'apis__batch__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'openapi', f), 'utf8')) as JsonValue,
  ),
);

/** Live objects as the real API server returned them, with their managedFields. */
const liveObjects: JsonObject[] = [];
for (const file of fs.readdirSync(path.join(fixtures, 'engine')).filter((f) => /^predict-.*\.yaml$/.test(f))) {
  const cases = parse(fs.readFileSync(path.join(fixtures, 'engine', file), 'utf8'), {
    merge: true,
    maxAliasCount: -1,
  }) as { live: JsonObject | null; captured?: { live: JsonObject } }[];
  for (const c of cases) {
    if (c.captured?.live) liveObjects.push(c.captured.live);
    else if (c.live) liveObjects.push(c.live);
  }
}
assert.ok(liveObjects.length >= 20, 'the engine fixtures hold captured live objects');

const served = (resource: ManifestResource) => ({
  state: 'served' as const,
  group: resource.apiVersion.includes('/') ? resource.apiVersion.split('/')[0]! : '',
  resource: `${resource.kind.toLowerCase()}s`,
  namespaced: true,
});

/** The facts for a resource: a captured live object of its kind if there is one, else its own object made live by a fixture's managers. */
function factsFor(rng: Rng, resource: ManifestResource): ResourceFacts {
  const sameKind = liveObjects.filter((l) => l.kind === resource.kind && l.apiVersion === resource.apiVersion);
  const roll = rng.int(10);
  if (roll === 0) return { kind: served(resource), live: { state: 'absent' }, schema };
  if (roll === 1)
    return {
      kind: { state: 'notServed', message: 'the server could not find the requested resource' },
      live: { state: 'absent' },
      schema: undefined,
    };
  if (roll === 2) return { kind: served(resource), live: { state: 'pending' }, schema };
  let live: JsonObject;
  if (sameKind.length > 0 && roll < 7) {
    live = rng.pick(sameKind);
  } else {
    // The manifest's own object as the live one, owned by the managers of a captured object: the
    // managedFields then name paths the object really has.
    const donor = rng.pick(liveObjects);
    const donorMeta = isJsonObject(donor.metadata) ? donor.metadata : {};
    const meta = isJsonObject(resource.object.metadata) ? resource.object.metadata : {};
    live = {
      ...resource.object,
      metadata: { ...meta, resourceVersion: '42', managedFields: donorMeta.managedFields ?? [] },
    };
  }
  return {
    kind: served(resource),
    live: { state: 'exists', object: live },
    schema: rng.chance(0.9) ? schema : undefined,
  };
}

function exercise(rng: Rng, text: string, timer: CallTimer): void {
  const cache = createManifestCache();
  const parsed: ParsedManifest = timer.run('parse', () => parseManifestText(text, cache));
  // Values first and the full parse agree (outside the budget: it parses twice more).
  assertParsesAgree(text, 'values first and the full parse', createManifestCache());
  // An edit in the middle of the text, parsed with the cache of the previous version.
  const at = rng.int(text.length + 1);
  const edited = text.slice(0, at) + rng.pick(['x', '\n', ' ', '- ', ': ', '---\n', '']) + text.slice(at + rng.int(3));
  if (rng.chance(0.3)) timer.run('parse after an edit (cached)', () => parseManifestText(edited, cache));

  const resources = parsed.resources.slice(0, 12);
  const removals: { resource: ManifestResource; paths: string[] }[] = [];
  for (const resource of resources) {
    const facts = factsFor(rng, resource);
    const options = locateOptions(resource, facts.schema);
    // Locate: every path the tree has (sampled), by path and by its printed form.
    const paths: ReturnType<typeof formatPath>[] = [];
    timer.run('walk and locate', () => {
      forEachNode(resource, (v) => {
        if (paths.length < 2000 && rng.chance(0.2)) {
          paths.push(formatPath(v.path));
          assert.ok(locate(resource, v.path, options), `a visited path is found: ${formatPath(v.path)}`);
        }
      });
      for (const p of paths.slice(0, 20)) locatePathString(resource, p, options);
    });

    const settings: AnalysisSettings = {
      fieldManager: rng.pick(['kubectl', 'kubectl', 'helm', 'kube-controller-manager']),
      applyMode: rng.pick(['serverSide', 'serverSide', 'clientSide', 'create'] as const),
    };
    const findings = timer.run('analysis', () => analyzeResource(resource, facts, settings));
    const withPath = findings.filter((f) => f.path !== undefined);
    if (withPath.length > 0) removals.push({ resource, paths: withPath.map((f) => f.path!) });

    // Quick fixes: every edit offered must apply and leave a text that parses without an exception.
    for (const [i, finding] of withPath.slice(0, 2).entries()) {
      const removal = timer.run('remove-field fix', () => removeFieldEdits(text, resource, finding.path!, options));
      if (removal.edits && i === 0 && rng.chance(0.5))
        timer.run('parse the fixed text', () => parseManifestText(applyTextEdits(text, removal.edits)));
      if (finding.liveValue !== undefined) {
        const replace = timer.run('take-live-value fix', () =>
          replaceValueEdits(text, resource, finding.path!, finding.liveValue!, options),
        );
        if (replace.edits)
          timer.run('parse the fixed text', () => parseManifestText(applyTextEdits(text, replace.edits)));
      }
    }
    // A few paths the manifest writes, as if a finding were on them.
    for (const p of rng.chance(0.3) ? paths.slice(0, 1) : []) {
      const removal = timer.run('remove-field fix (any path)', () => removeFieldEdits(text, resource, p, options));
      if (removal.edits)
        timer.run('parse the fixed text', () => parseManifestText(applyTextEdits(text, removal.edits)));
    }

    // Hovers at random places of the resource, and on every line for small ones.
    const { start, end } = resource.range;
    const lines = end.line - start.line + 1;
    timer.run('hover', () => {
      for (let i = 0; i < Math.min(lines, 8); i++) {
        const line = lines <= 8 ? start.line + i : start.line + rng.int(lines);
        const position = { line, character: rng.int(40) };
        const found = nodeAt(resource, position, facts.schema);
        const now = Date.parse('2026-12-01T00:00:00Z');
        if (!found) objectHover(resource, facts, now);
        else fieldHover(resource, facts, found.path, found.node, now);
      }
    });

    if (facts.live.state === 'exists' && rng.chance(0.25)) {
      const live = facts.live.object;
      timer.run('ownership view', () => ownershipView(live, facts.schema));
    }
  }
  if (removals.length > 0 && rng.chance(0.3)) {
    const fixAll = timer.run('remove every contested field of the file', () => removeFieldsInFileEdits(text, removals));
    if (fixAll.edits.length > 0)
      timer.run('parse the fixed text', () => parseManifestText(applyTextEdits(text, fixAll.edits)));
  }
}

test('fuzz: the core takes any input without an exception, within its time budget and bounded memory', () => {
  const { seed, iterations, only } = campaignSettings(20_000);
  const indexes = only !== undefined ? [only] : Array.from({ length: iterations }, (_, i) => i);
  collectGarbage();
  const heapAtStart = process.memoryUsage().heapUsed;
  const rssAtStart = peakRss() ?? 0;
  let largest = 0;
  const failures: string[] = [];
  const shapes = new Map<string, number>();
  const started = performance.now();
  for (const index of indexes) {
    const input = fuzzInput(seed, index);
    largest = Math.max(largest, input.text.length);
    const kind = input.shape.startsWith('stress') ? input.shape.replace(/\d+/g, 'N') : input.shape.split(',')[0]!;
    shapes.set(kind, (shapes.get(kind) ?? 0) + 1);
    const timer = new CallTimer(input.text);
    const where = () => `seed ${seed}, input ${index} (${input.shape}, ${input.text.length} characters)`;
    try {
      exercise(inputRng(seed ^ 0x5bd1e995, index), input.text, timer);
    } catch (e) {
      failures.push(
        `${where()}: ${(e as Error).stack ?? String(e)}\n  ${saveFailure('core', seed, index, input.text)}`,
      );
    }
    const slow = timer.overruns();
    if (slow.length > 0)
      failures.push(
        `${where()} is over its time budget:\n  ${slow.join('\n  ')}\n  ${saveFailure('core', seed, index, input.text)}`,
      );
    // Retained memory: nothing of an input may stay behind.
    if (process.memoryUsage().heapUsed - heapAtStart > 512 * MiB) {
      collectGarbage();
      const retained = process.memoryUsage().heapUsed - heapAtStart;
      if (retained > 256 * MiB) failures.push(`${where()}: ${(retained / MiB).toFixed(0)} MiB of heap retained`);
    }
    if (failures.length >= 5) break;
  }
  collectGarbage();
  const retained = process.memoryUsage().heapUsed - heapAtStart;
  const peak = peakRss();
  console.log(
    `fuzz core: seed ${seed}, ${indexes.length} inputs in ${((performance.now() - started) / 1000).toFixed(1)} s; heap retained ${(retained / MiB).toFixed(1)} MiB; peak RSS ${peak ? (peak / MiB).toFixed(0) : '?'} MiB; largest input ${(largest / 1024).toFixed(0)} KiB\n  ` +
      [...shapes].map(([s, n]) => `${s}: ${n}`).join('\n  ') +
      `\n  time per call: ${[...CallTimer.totals]
        .sort((a, b) => b[1] - a[1])
        .map(([name, ms]) => `${name} ${(ms / 1000).toFixed(1)} s`)
        .join(', ')}`,
  );
  assert.deepEqual(failures, [], `fuzz failures (seed ${seed}):\n${failures.join('\n\n')}`);
  assert.ok(retained < 64 * MiB, `the campaign retained ${(retained / MiB).toFixed(1)} MiB of heap (seed ${seed})`);
  // Peak memory: the largest inputs are a few hundred KiB; a blow-up (an alias expansion, a
  // document parsed whole at 160 times its size) shows as a peak far above the start.
  if (peak !== undefined)
    assert.ok(
      peak - rssAtStart < 1024 * MiB,
      `peak RSS grew by ${((peak - rssAtStart) / MiB).toFixed(0)} MiB (seed ${seed})`,
    );
});
