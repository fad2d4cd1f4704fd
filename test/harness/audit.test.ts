// The audit log proves which requests a client sent: user, verb and the full URI with its query.
// Tests of the product rely on it to show that it only reads and dry-runs.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { readAuditEvents, waitForAuditEvent } from '../support/cluster';
import { requireCluster } from '../support/env';
import { apply, connect, freshNamespace, request, webDeployment } from '../support/seed';

test('the audit log records user, verb and the full request URI of every request', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin');
  const namespace = await freshNamespace(admin, 'audit');

  const listUri = `/apis/apps/v1/namespaces/${namespace}/deployments?labelSelector=app%3Dweb&limit=7`;
  const list = await request(connect('viewer'), 'GET', listUri);
  assert.equal(list.status, 200);
  const dryRun = await apply(admin, 'kubectl', webDeployment(namespace), { dryRun: true });
  assert.equal(dryRun.status, 201);
  const forbiddenUri = `/api/v1/namespaces/${namespace}/configmaps/anything`;
  const forbidden = await request(connect('stranger'), 'GET', forbiddenUri);
  assert.equal(forbidden.status, 403);

  const expected = [
    { user: 'viewer', verb: 'list', uri: listUri, code: 200 },
    {
      user: 'admin',
      verb: 'patch',
      uri: `/apis/apps/v1/namespaces/${namespace}/deployments/web?fieldManager=kubectl&dryRun=All`,
      code: 201,
    },
    { user: 'stranger', verb: 'get', uri: forbiddenUri, code: 403 },
  ];
  for (const e of expected) {
    const event = await waitForAuditEvent(
      cluster.auditLog,
      (a) => a.requestURI === e.uri && a.user.username === e.user,
    );
    assert.ok(event, `no audit event for ${e.user} ${e.uri}`);
    assert.equal(event.verb, e.verb);
    assert.equal(event.stage, 'ResponseComplete');
    assert.equal(event.responseStatus?.code, e.code);
  }
});

test('reading the audit log: events appended later are seen, a line written in two parts only when complete, a new log from the start', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-audit-'));
  const log = path.join(dir, 'audit.log');
  const line = (id: string) =>
    JSON.stringify({
      auditID: id,
      stage: 'ResponseComplete',
      verb: 'get',
      requestURI: `/api/${id}`,
      user: { username: 'admin' },
    });
  try {
    assert.deepEqual(readAuditEvents(log), [], 'no log yet');
    fs.writeFileSync(log, `${line('a')}\n${line('b')}\n`);
    assert.deepEqual(
      readAuditEvents(log).map((e) => e.auditID),
      ['a', 'b'],
    );
    const c = line('c');
    fs.appendFileSync(log, c.slice(0, 20));
    assert.deepEqual(
      readAuditEvents(log).map((e) => e.auditID),
      ['a', 'b'],
      'half a line is not an event',
    );
    fs.appendFileSync(log, `${c.slice(20)}\n${line('ü')}\n`);
    assert.deepEqual(
      readAuditEvents(log).map((e) => e.auditID),
      ['a', 'b', 'c', 'ü'],
    );
    fs.rmSync(log);
    fs.writeFileSync(log, `${line('d')}\n`);
    assert.deepEqual(
      readAuditEvents(log).map((e) => e.auditID),
      ['d'],
      'a cluster started again writes a new log',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
