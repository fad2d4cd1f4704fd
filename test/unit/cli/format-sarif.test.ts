// `--format sarif` (cli/format-sarif.ts): SARIF 2.1.0 for code-scanning services. The rules are the
// rule catalogue (id, title, help link, default level); each finding of real analyses (captured
// histories) is a result on its 1-based region, pointing at its rule.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { toSarif } from '../../../server/src/cli/format-sarif';
import { findingCatalogue, findingCodes } from '../../../server/src/core/findings/catalogue';
import { checkOfHistories } from '../../support/findings-fixtures';

const sarifSchema = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'fixtures', 'sarif-2.1.0-subset.schema.json'), 'utf8'),
);
// strictRequired off: SARIF's own `anyOf: [{required: [text]}, {required: [id]}]` names properties declared beside it.
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
addFormats(ajv);
const validate = ajv.compile(sarifSchema);
const options = { toolVersion: '0.1.0', baseUri: 'file:///work/repo/' };
const levels = { error: 'error', warning: 'warning', information: 'note' } as const;

describe('SARIF of captured histories', () => {
  for (const mode of ['serverSide', 'clientSide', 'create'] as const) {
    test(`${mode}: valid SARIF 2.1.0`, () => {
      const log = JSON.parse(JSON.stringify(toSarif(checkOfHistories(mode), options)));
      assert.ok(validate(log), ajv.errorsText(validate.errors));
    });
  }

  test('the rules are the catalogue: every code once, its title, help link and default level', () => {
    const [run] = toSarif(checkOfHistories(), options).runs;
    assert.deepEqual(
      run!.tool.driver.rules.map((r) => [r.id, r.name, r.helpUri, r.defaultConfiguration.level]),
      findingCodes.map((c) => [
        c,
        findingCatalogue[c].title,
        findingCatalogue[c].docs,
        levels[findingCatalogue[c].severity],
      ]),
    );
    // Each help link is the documentation of the project that decides the answer: Kubernetes, Helm, Kustomize.
    for (const r of run!.tool.driver.rules)
      assert.match(
        r.helpUri,
        /^https:\/\/(kubernetes\.io\/docs|helm\.sh\/docs|kubectl\.docs\.kubernetes\.io\/references\/kustomize)\//,
      );
  });

  test('one result per finding and per dry-run difference, on its 1-based region, pointing at its rule', () => {
    const report = checkOfHistories();
    const [run] = toSarif(report, options).runs;
    const expected = report.objects.flatMap((o) => [
      ...o.findings.map((f) => ({
        ruleId: f.code,
        level: levels[f.severity],
        uri: o.file,
        line: f.range.start.line + 1,
        column: f.range.start.character + 1,
        text: `${o.title}: ${f.message}`,
      })),
      ...(o.verification?.differences ?? []).map((d) => ({
        ruleId: 'dry-run-differs',
        level: 'error',
        uri: o.file,
        line: d.range.start.line + 1,
        column: d.range.start.character + 1,
        text: `${o.title}: ${d.message}`,
      })),
    ]);
    assert.deepEqual(
      run!.results.map((r) => {
        const { artifactLocation, region } = r.locations[0]!.physicalLocation;
        return {
          ruleId: r.ruleId,
          level: r.level,
          uri: artifactLocation.uri,
          line: region.startLine,
          column: region.startColumn,
          text: r.message.text,
        };
      }),
      expected,
    );
    for (const r of run!.results) assert.equal(run!.tool.driver.rules[r.ruleIndex]!.id, r.ruleId);
    const conflict = run!.results.find(
      (r) =>
        r.ruleId === 'field-conflict' &&
        (r.properties?.manager as { subresource?: string } | undefined)?.subresource === 'scale',
    );
    assert.deepEqual(
      [conflict?.properties?.path, conflict?.properties?.liveValue, conflict?.properties?.manifestValue],
      ['.spec.replicas', 5, 3],
    );
  });

  test('relative files are relative to the working directory; absolute ones are file URLs', () => {
    const report = checkOfHistories();
    const absolute = {
      ...report,
      objects: report.objects.map((o, i) => (i === 0 ? { ...o, file: '/work/repo/k8s/a b.yaml' } : o)),
    };
    const [run] = toSarif(absolute, options).runs;
    assert.deepEqual(run!.originalUriBaseIds, { SRCROOT: { uri: options.baseUri } });
    const uris = run!.results.map((r) => r.locations[0]!.physicalLocation.artifactLocation);
    assert.ok(uris.some((u) => u.uri === 'file:///work/repo/k8s/a%20b.yaml' && u.uriBaseId === undefined));
    assert.ok(uris.some((u) => u.uri.startsWith('k8s/') && u.uriBaseId === 'SRCROOT'));
  });
});
