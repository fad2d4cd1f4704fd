// Conflict prediction against the cases in test/fixtures/engine/predict-*.yaml: for each, the
// predicted (manager, path) causes must equal the server's causes as a set, and where a case
// states them, the message, the deleted paths, the forgiven conflicts and the refusals too.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import type { JsonObject, JsonValue } from '../../server/src/core/json';
import { conflictCauses, formatServerPath } from '../../server/src/core/messages';
import { predictApply, type ApplyMode } from '../../server/src/core/predict';
import { schemaFromOpenApi } from '../../server/src/core/schema';

const fixtures = path.join(import.meta.dirname, '..', 'fixtures');
const openapi = ['api__v1.json', 'apis__apps__v1.json', 'apis__batch__v1.json'].map(
  (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'openapi', f), 'utf8')) as JsonValue,
);
const { schema } = schemaFromOpenApi(openapi);

interface Cause {
  message: string;
  field: string;
}
interface Case {
  name: string;
  capture?: string;
  mode?: ApplyMode;
  fieldManager?: string;
  resource: { group: string; resource: string };
  manifest: JsonObject;
  live: JsonObject | null;
  /** Written by test/fixtures/capture.ts: the live object and the answer of the real server. */
  captured?: { server: string; live: JsonObject; answer: { code: number; reason?: string; message?: string; causes?: Cause[] } };
  expect: {
    causes: Cause[];
    message?: string;
    forgiven?: Cause[];
    deletions?: string[];
    problems?: string[];
    status?: { code: number; reason: string; message: string };
  };
}

const asSet = (causes: readonly Cause[]): string[] => [...new Set(causes.map((c) => `${c.message} @ ${c.field}`))].sort();

for (const file of fs.readdirSync(path.join(fixtures, 'engine')).filter((f) => /^predict-.*\.yaml$/.test(f))) {
  const cases = parse(fs.readFileSync(path.join(fixtures, 'engine', file), 'utf8'), { merge: true }) as Case[];
  describe(`predictApply: ${file}`, () => {
    for (const c of cases) {
      test(c.name, () => {
        const prediction = predictApply({
          manifestObject: c.manifest,
          live: c.live ?? undefined,
          schema,
          fieldManager: c.fieldManager ?? 'kubectl',
          mode: c.mode ?? 'serverSide',
          resource: c.resource,
        });
        assert.deepEqual(asSet(conflictCauses(prediction.conflicts)), asSet(c.expect.causes), 'conflict causes');
        if (c.expect.message !== undefined) assert.equal(prediction.status?.message, c.expect.message);
        if (c.expect.forgiven) assert.deepEqual(asSet(conflictCauses(prediction.forgiven)), asSet(c.expect.forgiven), 'forgiven');
        if (c.expect.deletions) assert.deepEqual(prediction.deletions.map(formatServerPath).sort(), [...c.expect.deletions].sort(), 'deletions');
        assert.deepEqual([...new Set(prediction.problems.map((p) => p.code))].sort(), [...(c.expect.problems ?? [])].sort(), 'problems');
        if (c.captured) {
          // The real server is the judge: the prediction on the captured live object must give its causes.
          const onCaptured = predictApply({
            manifestObject: { ...c.manifest, metadata: { ...(c.manifest.metadata as JsonObject), namespace: (c.captured.live.metadata as JsonObject).namespace as string } },
            live: c.captured.live,
            schema,
            fieldManager: c.fieldManager ?? 'kubectl',
            mode: 'serverSide',
            resource: c.resource,
          });
          assert.deepEqual(asSet(conflictCauses(onCaptured.conflicts)), asSet(c.captured.answer.causes ?? []), `causes from ${c.captured.server}`);
          if (c.captured.answer.code === 409) assert.equal(onCaptured.status?.message !== undefined, true);
        }
        if (c.expect.status) {
          assert.deepEqual({ code: prediction.status?.code, reason: prediction.status?.reason, message: prediction.status?.message }, c.expect.status);
        } else if (c.expect.causes.length === 0) {
          assert.equal(prediction.status, undefined, 'the server would accept this apply');
        }
      });
    }
  });
}
