// `--format json` (cli/format-json.ts) is a public, versioned record described by
// schemas/findings.schema.json: the output of real findings (captured histories, analysed as the
// command line analyses them) must validate, hold exactly the fields the schema declares, and
// never let a field that exists only inside the product leak out.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { formatJson, jsonReportVersion, publicFinding, toJsonReport } from '../../../server/src/cli/format-json';
import type { CheckReport } from '../../../server/src/cli/report';
import type { AppliedBy, Finding } from '../../../server/src/core/findings';
import { dryRunDiffersCode, findingCodes } from '../../../server/src/core/findings/catalogue';
import { checkOfHistories } from '../../support/findings-fixtures';

const schema = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'schemas', 'findings.schema.json'), 'utf8'),
);
const ajv = new Ajv({ allErrors: true, strict: true });
addFormats(ajv);
const validate = ajv.compile(schema);
const declared = (definition: { properties: object }) => Object.keys(definition.properties).sort();

describe('the JSON output of captured histories', () => {
  for (const mode of ['serverSide', 'clientSide', 'create'] as const) {
    test(`${mode}: valid against schemas/findings.schema.json`, () => {
      const json = JSON.parse(formatJson(checkOfHistories(mode))) as { findings: unknown[] };
      assert.ok(validate(json), ajv.errorsText(validate.errors));
      assert.ok(json.findings.length > 5, 'real findings, not an empty list');
    });
  }

  test('every finding of the report, with its file, in the order of the objects', () => {
    const report = checkOfHistories();
    const json = toJsonReport(report);
    assert.deepEqual(
      json.findings.map((f) => `${f.file} ${f.code} ${f.range.start.line}:${f.range.start.character}`),
      report.objects.flatMap((o) =>
        o.findings.map((f) => `${o.file} ${f.code} ${f.range.start.line}:${f.range.start.character}`),
      ),
    );
    assert.ok(
      json.findings.some(
        (f) =>
          f.code === 'field-conflict' &&
          f.manager?.subresource === 'scale' &&
          f.liveValue === 5 &&
          f.manifestValue === 3,
      ),
    );
  });
});

describe('the public record is a mapping, not the internal one', () => {
  test('the version is the one the schema declares', () => {
    assert.equal(toJsonReport(checkOfHistories()).version, schema.properties.version.const);
    assert.equal(jsonReportVersion, schema.properties.version.const);
  });

  test('a finding with every field set gives exactly the fields the schema declares', () => {
    const full: Required<Finding> = {
      code: 'field-conflict',
      severity: 'error',
      message: 'm',
      range: { start: { line: 1, character: 2 }, end: { line: 1, character: 3 } },
      object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', namespace: 'ns' },
      path: '.data.a',
      manager: { manager: 'kubectl-edit', operation: 'Update', apiVersion: 'v1', subresource: 'status' },
      liveValue: null,
      manifestValue: { a: [1] },
      serverMessage: 'Apply failed with 1 conflict',
      // The field a 422 names, for comparing with the server's answer: not part of the record.
      serverField: 'data',
      docs: 'https://kubernetes.io/docs/',
    };
    // Found on a rendered object (an overlay, a chart), in one context of several: the finding also says which.
    const mapped = publicFinding(
      'k8s/a.yaml',
      full,
      { target: 'overlay production', root: 'deploy/overlays/production', index: 0 },
      'prod-eu',
    );
    assert.deepEqual(Object.keys(mapped).sort(), declared(schema.definitions.finding));
    assert.deepEqual(Object.keys(mapped.rendered!).sort(), declared(schema.definitions.rendered));
    assert.deepEqual(Object.keys(mapped.manager!).sort(), declared(schema.definitions.managerIdentity));
    assert.deepEqual(Object.keys(mapped.object!).sort(), declared(schema.definitions.objectIdentity));
    assert.equal(mapped.liveValue, null, 'a JSON null is a value, kept');
  });

  test('who applies an object: every field the schema declares, and only those, for each kind of policy', () => {
    const sighting = { kind: 'flux-kustomize' as const, name: 'gone', namespace: 'apps', evidence: 'labels' };
    const appliers: AppliedBy[] = [
      {
        tool: 'argocd',
        name: 'shop',
        namespace: 'argocd',
        maybe: true,
        evidence: 'label app.kubernetes.io/instance',
        text: 'Maybe applied by Argo CD application argocd/shop',
        policy: {
          state: 'read',
          policy: {
            kind: 'argocd',
            name: 'shop',
            namespace: 'argocd',
            automated: true,
            selfHeal: true,
            prune: false,
            serverSideApply: true,
            respectIgnoreDifferences: true,
            ignoreDifferences: [
              {
                group: 'apps',
                kind: 'Deployment',
                name: 'web',
                namespace: 'shop',
                jsonPointers: ['/spec/replicas'],
                jqPathExpressions: [],
                managedFieldsManagers: ['kube-controller-manager'],
              },
            ],
            // The repository's URL may carry a credential: not part of the record.
            sources: [{ repoURL: 'https://user:token@example.com/shop.git', path: 'deploy' }],
          },
        },
      },
      {
        tool: 'flux-kustomize',
        name: 'shop',
        namespace: 'apps',
        evidence: 'labels',
        text: 't',
        policy: {
          state: 'read',
          policy: {
            kind: 'flux-kustomize',
            name: 'shop',
            namespace: 'apps',
            interval: '10m',
            suspend: false,
            force: true,
            prune: true,
            path: './apps',
          },
        },
      },
      {
        tool: 'flux-helm',
        name: 'web',
        namespace: 'apps',
        evidence: 'labels',
        text: 't',
        policy: {
          state: 'read',
          policy: {
            kind: 'flux-helm',
            name: 'web',
            namespace: 'apps',
            interval: '5m',
            suspend: true,
            driftDetection: 'warn',
            driftIgnore: [],
          },
        },
      },
      {
        tool: 'flux-kustomize',
        name: 'gone',
        namespace: 'apps',
        evidence: 'labels',
        text: 't',
        policy: { state: 'unknown', sighting, reason: 'does not exist' },
      },
    ];
    const report = checkOfHistories();
    const json = toJsonReport({ ...report, objects: [{ ...report.objects[0]!, appliedBy: appliers }] });
    assert.ok(validate(json), ajv.errorsText(validate.errors));
    const mapped = json.objects[0]!.appliedBy!;
    const definition = schema.definitions.appliedBy;
    assert.deepEqual(Object.keys(mapped[0]!).sort(), declared(definition));
    const policyKeys = new Set(mapped.flatMap((a) => Object.keys(a.policy ?? {})));
    assert.deepEqual([...policyKeys].sort(), declared(definition.properties.policy));
    assert.deepEqual(
      Object.keys(mapped[0]!.policy!.ignoreDifferences![0]!).sort(),
      declared(definition.properties.policy.properties.ignoreDifferences.items),
    );
    assert.doesNotMatch(JSON.stringify(json), /token/);
    assert.deepEqual(mapped[3]!.policy, { state: 'unknown', reason: 'does not exist' });
  });

  test('fields that exist only inside the product do not reach the output', () => {
    // As if Finding (and the records it holds) had grown fields for the editor's sake.
    const report = checkOfHistories();
    const grown = <T extends object>(o: T): T => ({ ...o, internalOnly: 'secret of the implementation' });
    const withInternals: CheckReport = {
      ...report,
      source: grown(report.source),
      objects: report.objects.map((o) => ({
        ...grown(o),
        ...(o.object ? { object: grown(o.object) } : {}),
        ...(o.verification
          ? {
              verification: {
                ...grown(o.verification),
                differences: o.verification.differences.map((d) => ({ ...grown(d), range: grown(d.range) })),
              },
            }
          : {}),
        findings: o.findings.map((f) => ({
          ...grown(f),
          range: { start: grown(f.range.start), end: grown(f.range.end) },
          ...(f.manager ? { manager: grown(f.manager) } : {}),
          ...(f.object ? { object: grown(f.object) } : {}),
        })),
      })),
    };
    const text = formatJson(withInternals);
    assert.doesNotMatch(text, /internalOnly/);
    assert.equal(text, formatJson(report));
    assert.ok(validate(JSON.parse(text)), ajv.errorsText(validate.errors));
  });

  test('the schema names every code the analysis can give; dry-run answers are in `verification`, not findings', () => {
    assert.deepEqual(
      [...schema.definitions.finding.properties.code.enum].sort(),
      findingCodes.filter((c) => c !== dryRunDiffersCode).sort(),
    );
    const json = toJsonReport(checkOfHistories());
    assert.ok(json.objects.some((o) => o.verification?.differences.length));
    assert.ok(json.findings.every((f) => f.code !== dryRunDiffersCode));
  });
});
