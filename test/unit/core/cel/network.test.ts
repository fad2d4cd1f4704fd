// Kubernetes' URL, IP, CIDR and format CEL libraries (core/cel/network.ts, registered by
// libraries.ts) against the API server's own answers, captured from the local kube-apiserver by
// `node --import tsx test/fixtures/capture.ts cel` into test/fixtures/cel/libraries.json: each case
// is a ConfigMap's data judged by a ValidatingAdmissionPolicy whose messageExpression prints what the
// functions give (`values`: url()'s parts, ip() and cidr() and their methods, every named format's
// errors), or whose expressions fail at run time in the server's words (`errors`: url(), ip(),
// ip.isCanonical(), cidr(), containsIP(), containsCIDR() of texts Go refuses). The product must give
// the same text for every case. The differential suites prove the same on the real server, in
// CRD validation rules and policies (test/differential/scenarios/cel-libraries.yaml,
// admission-policies/libraries-and-errors.yaml).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { evaluatePolicyExpression, type PolicyInput } from '../../../../server/src/core/cel/admission';
import { isURL, parseCIDR, parseIP, parseURL } from '../../../../server/src/core/cel/network';

interface Fixture {
  values: { messageExpressions: { when: string; messageExpression: string }[]; cases: Case[] };
  errors: { expressions: string[]; cases: Case[] };
}
interface Case {
  data: Record<string, string>;
  server: string;
}

const fixture = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, '../../../fixtures/cel/libraries.json'), 'utf8'),
) as Fixture;

function input(data: Record<string, string>): PolicyInput {
  return { object: { data }, oldObject: null, params: null, namespaceObject: null, request: {}, variables: new Map() };
}

test('the functions give what the server prints for every captured URL, IP, CIDR and format case', () => {
  assert.ok(fixture.values.cases.length >= 500);
  const wrong: string[] = [];
  for (const kase of fixture.values.cases) {
    const v = fixture.values.messageExpressions.find((m) => m.when in kase.data)!;
    const a = evaluatePolicyExpression(v.messageExpression, input(kase.data));
    // A messageExpression that fails at run time leaves the validation's message (ERR).
    const said = a.kind === 'value' ? String(a.value) : a.kind === 'error' ? 'ERR' : `unknown: ${a.why}`;
    if (said !== kase.server) wrong.push(`${JSON.stringify(kase.data)}: server ${kase.server}, product ${said}`);
  }
  assert.deepEqual(wrong, []);
});

test("an expression that fails at run time does so in the server's words", () => {
  const wrong: string[] = [];
  for (const kase of fixture.errors.cases) {
    let said = 'accepted';
    for (const expression of fixture.errors.expressions) {
      const a = evaluatePolicyExpression(expression, input(kase.data));
      if (a.kind === 'value' && a.value === true) continue;
      said =
        a.kind === 'error' && a.words !== undefined
          ? `expression '${expression}' resulted in error: ${a.words}`
          : a.kind === 'value'
            ? `failed expression: ${expression}`
            : `unknown: ${a.why}`;
      break;
    }
    if (said !== kase.server) wrong.push(`${JSON.stringify(kase.data)}:\n  server  ${kase.server}\n  product ${said}`);
  }
  assert.deepEqual(wrong, []);
});

test('Go bytes: a URL with non-ASCII text is escaped byte by byte, an IPv6 address printed in its shortest form', () => {
  assert.equal(parseURL('https://example.com/ü').getEscapedPath(), '/%C3%BC');
  assert.equal(parseURL('https://bücher.de/x').getHostname(), 'bücher.de');
  assert.equal(isURL('relative/path'), false);
  assert.equal(parseIP('2001:db8:0:0:1:0:0:1').toString(), '2001:db8::1:0:0:1');
  assert.equal(parseCIDR('10.1.2.3/8').masked().toString(), '10.0.0.0/8');
});

test('an http URL whose host has several colons is not judged: API server builds read it differently', () => {
  // A 1.34 server takes the last colon (`http://a:b:80/`: host a:b, port 80); one built from a
  // module of go 1.26 takes the first and refuses the URL (Go's urlstrictcolons).
  assert.equal(evaluatePolicyExpression("isURL('http://a:b:80/')", input({})).kind, 'unknown');
  assert.equal(evaluatePolicyExpression("url('ftp://a:b:21/').getPort() == '21'", input({})).kind, 'value');
  assert.equal(isURL('https://a:b:c/'), false);
});

test("a URL host's brackets that Go's security releases changed are not judged; an IPv6 literal is", () => {
  for (const u of ['https://[1.2.3.4]/', 'https://x[::1]/', 'https://[::g]/'])
    assert.equal(evaluatePolicyExpression(`isURL('${u}')`, input({})).kind, 'unknown', u);
  assert.equal(parseURL('https://[::1]:80/x').getHostname(), '::1');
  assert.equal(isURL('https://[::1/'), false);
});
