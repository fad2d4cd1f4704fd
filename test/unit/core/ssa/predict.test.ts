// Conflict prediction against the cases in test/fixtures/engine/predict-*.yaml. Every case is
// captured from the real kube-apiserver (test/fixtures/capture.ts): the live object as the server
// stored it and its answer to the request the case's mode sends. On the captured live object the
// prediction must give that answer whole: success for a 2xx, else the same status code, reason
// and message, and the same causes. Where a case states them, the hand-written expectations on
// its own live object (causes, message, deletions, forgiven conflicts, refusals) are checked too.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import type { JsonObject, JsonValue } from '../../../../server/src/core/json';
import { conflictCauses, formatServerPath } from '../../../../server/src/core/ssa/messages';
import { predictApply, type ApplyMode, type ApplyPrediction } from '../../../../server/src/core/ssa/predict';
import { schemaFromOpenApi } from '../../../../server/src/core/ssa/schema';

const fixtures = path.join(import.meta.dirname, '..', '..', '..', 'fixtures');
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
  /** Written by test/fixtures/capture.ts: the live object (null: none) and the server's answer. */
  captured?: {
    server: string;
    request?: string;
    namespace?: string;
    live: JsonObject | null;
    answer: { code: number; reason?: string; message?: string; causes?: Cause[] };
  };
  expect: {
    causes: Cause[];
    message?: string;
    forgiven?: Cause[];
    deletions?: string[];
    problems?: string[];
    status?: { code: number; reason: string; message: string };
  };
}

const asSet = (causes: readonly Cause[]): string[] =>
  [...new Set(causes.map((c) => `${c.message} @ ${c.field}`))].sort();
/** Causes each once: the server may list one cause twice (a 422's field error, validated twice). */
const asList = asSet;

function predict(c: Case, manifest: JsonObject, live: JsonObject | null): ApplyPrediction {
  return predictApply({
    manifestObject: manifest,
    live: live ?? undefined,
    schema,
    fieldManager: c.fieldManager ?? 'kubectl',
    mode: c.mode ?? 'serverSide',
    resource: c.resource,
  });
}

/** The server's answer as the prediction must state it: nothing for a success, else the status. */
function serverStatus(answer: NonNullable<Case['captured']>['answer']): object | undefined {
  if (answer.code < 300) return undefined;
  return {
    code: answer.code,
    reason: answer.reason ?? '',
    message: answer.message,
    causes: asList(answer.causes ?? []),
  };
}

function predictedStatus(p: ApplyPrediction): object | undefined {
  const s = p.status;
  return s && { code: s.code, reason: s.reason, message: s.message, causes: asList(s.causes ?? []) };
}

for (const file of fs.readdirSync(path.join(fixtures, 'engine')).filter((f) => /^predict-.*\.yaml$/.test(f))) {
  const cases = parse(fs.readFileSync(path.join(fixtures, 'engine', file), 'utf8'), { merge: true }) as Case[];
  describe(`predictApply: ${file}`, () => {
    for (const c of cases) {
      test(c.name, () => {
        // A hand-written answer is a guess: every case must come from the real server.
        assert.equal(
          c.capture,
          'done',
          'the case is captured from the real server (node --import tsx test/fixtures/capture.ts engine --pending)',
        );
        assert.ok(c.captured, 'the captured answer is stored');
        const captured = c.captured;
        assert.equal(
          captured.live === null,
          c.live === null,
          'captured with a live object exactly when the case has one',
        );
        // The namespace is part of the server's words for some refusals: the capture's own.
        const namespace =
          captured.namespace ?? ((captured.live?.metadata as JsonObject | undefined)?.namespace as string);
        const onCaptured = predict(
          c,
          { ...c.manifest, metadata: { ...(c.manifest.metadata as JsonObject), namespace } },
          captured.live,
        );
        assert.deepEqual(
          predictedStatus(onCaptured),
          serverStatus(captured.answer),
          `the answer of ${captured.server} (${captured.request ?? 'dry-run apply'})`,
        );
        checkExpectations(c);
      });
    }
  });
}

/** The case's own expectations, on its hand-written live object. */
function checkExpectations(c: Case): void {
  const prediction = predict(c, c.manifest, c.live);
  assert.deepEqual(asSet(conflictCauses(prediction.conflicts)), asSet(c.expect.causes), 'conflict causes');
  if (c.expect.message !== undefined) assert.equal(prediction.status?.message, c.expect.message);
  if (c.expect.forgiven)
    assert.deepEqual(asSet(conflictCauses(prediction.forgiven)), asSet(c.expect.forgiven), 'forgiven');
  if (c.expect.deletions)
    assert.deepEqual(prediction.deletions.map(formatServerPath).sort(), [...c.expect.deletions].sort(), 'deletions');
  assert.deepEqual(
    [...new Set(prediction.problems.map((p) => p.code))].sort(),
    [...(c.expect.problems ?? [])].sort(),
    'problems',
  );
  if (c.expect.status) {
    assert.deepEqual(
      { code: prediction.status?.code, reason: prediction.status?.reason, message: prediction.status?.message },
      c.expect.status,
    );
  } else if (c.expect.causes.length === 0 && (c.expect.problems ?? []).length === 0) {
    assert.equal(prediction.status, undefined, 'the server would accept this request');
  }
}
