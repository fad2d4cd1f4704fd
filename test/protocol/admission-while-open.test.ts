// Policies made or removed while a file is open: the editor judges the file again when the
// ValidatingAdmissionPolicies or their bindings change (the cache watches them; nothing else need
// change), and says what the API server would answer now.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { parseAllDocuments } from 'yaml';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { connect, create, deleteObject, freshNamespace, objectOf, type KubeObject } from '../support/seed';

const denials = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'admission-policy-denies');

test('a policy made while the file is open refuses the object; removed, the refusal goes', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const home = await freshNamespace(admin, 'kch-vap-open');
  t.after(() => deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: home } }));
  const manifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${home}
spec:
  replicas: 6
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.0
`;
  objectOf(await create(admin, 'kubectl', parseAllDocuments(manifest)[0]!.toJS() as KubeObject), 'deployment');
  const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
  t.after(() => server.shutdown());
  const uri = 'file:///w/app/deployment.yaml';
  await server.open(uri, manifest);
  const before = await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'exists'));
  assert.deepEqual(denials(before), [], 'no policy yet');

  const [policy, binding] = parseAllDocuments(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-limit-${home}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: ${home}}
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: object.spec.replicas <= 5
    message: replicas must be no greater than 5
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replica-limit-binding-${home}
spec:
  policyName: replica-limit-${home}
  validationActions: [Deny]
`).map((d) => d.toJS() as KubeObject);
  objectOf(await create(admin, 'kch-test-setup', policy!), 'policy');
  t.after(() => deleteObject(admin, policy!));
  objectOf(await create(admin, 'kch-test-setup', binding!), 'binding');
  let bound = true;
  t.after(() => (bound ? deleteObject(admin, binding!) : undefined));

  const refused = await server.diagnosticsUntil(uri, (d) => denials(d).length === 1, 20_000);
  assert.match(denials(refused)[0]!.message, /replicas must be no greater than 5/);

  await deleteObject(admin, binding!);
  bound = false;
  const accepted = await server.diagnosticsUntil(uri, (d) => denials(d).length === 0, 20_000);
  assert.ok(
    accepted.some((d) => d.code === 'exists'),
    'the object is still judged',
  );
});
