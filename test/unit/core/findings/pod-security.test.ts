// Pod Security admission as the API server runs it (core/findings/pod-security.ts, a port of
// k8s.io/pod-security-admission v0.34): the namespace's labels, every check in the server's order,
// and its words. Each expected message was captured from the local kube-apiserver v1.34.4 (its
// built-in PodSecurity plugin) by test/differential/refusals.test.ts with KCH_DIFF_VERBOSE=1: the
// 403 of a Pod, or the Warning header of a workload, printed beside the product's finding.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  evaluatePod,
  levelVersionName,
  podForbiddenMessage,
  podSecurityPolicy,
  podSecurityWarning,
  type LevelVersion,
} from '../../../../server/src/core/findings/pod-security';
import type { JsonObject } from '../../../../server/src/core/json';
import { formatServerPath } from '../../../../server/src/core/ssa/messages';

const label = (mode: string) => `pod-security.kubernetes.io/${mode}`;
const restricted: LevelVersion = { level: 'restricted', minor: undefined };
const baseline: LevelVersion = { level: 'baseline', minor: undefined };
const web: JsonObject = { name: 'web', image: 'nginx' };
const refusal = (lv: LevelVersion, spec: JsonObject, metadata: JsonObject = {}) =>
  podForbiddenMessage('web', lv, evaluatePod(lv, metadata, spec));

describe('the policy of a namespace, from its labels (PolicyToEvaluate)', () => {
  test('warn follows a stricter enforce unless it is labelled', () => {
    const p = podSecurityPolicy({ [label('enforce')]: 'restricted' })!;
    assert.equal(levelVersionName(p.enforce), 'restricted:latest');
    assert.equal(levelVersionName(p.warn), 'restricted:latest');
    assert.equal(levelVersionName(p.audit), 'privileged:latest');
    const own = podSecurityPolicy({ [label('enforce')]: 'restricted', [label('warn')]: 'privileged' })!;
    assert.equal(levelVersionName(own.warn), 'privileged:latest');
    const pinned = podSecurityPolicy({ [label('enforce')]: 'baseline', [label('enforce-version')]: 'v1.24' })!;
    assert.equal(levelVersionName(pinned.warn), 'baseline:v1.24');
  });
  test('no labels: privileged everywhere; a label that does not parse: nothing is said', () => {
    assert.equal(levelVersionName(podSecurityPolicy({})!.enforce), 'privileged:latest');
    assert.equal(podSecurityPolicy({ [label('enforce')]: 'strict' }), undefined);
    assert.equal(podSecurityPolicy({ [label('enforce')]: 'baseline', [label('enforce-version')]: '1.25' }), undefined);
  });
});

describe('the checks, in the server order and words', () => {
  test('a plain Pod under restricted', () => {
    assert.equal(
      refusal(restricted, { containers: [web] }),
      'pods "web" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });
  test('baseline checks come before restricted ones, each sorted by id', () => {
    const spec = {
      securityContext: { runAsNonRoot: true, runAsUser: 0, seccompProfile: { type: 'Unconfined' } },
      containers: [
        {
          ...web,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'], add: ['SYS_ADMIN', 'NET_BIND_SERVICE'] },
          },
        },
      ],
    };
    assert.equal(
      refusal(restricted, spec),
      'pods "web" is forbidden: violates PodSecurity "restricted:latest": unrestricted capabilities (container "web" must not include "SYS_ADMIN" in securityContext.capabilities.add), runAsUser=0 (pod must not set runAsUser=0), seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    );
    assert.equal(
      podSecurityWarning(
        baseline,
        evaluatePod(
          baseline,
          {},
          { hostNetwork: true, securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [web] },
        ),
      ),
      'would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true), seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    );
  });
  test('a baseline check a restricted level still runs is named before the restricted ones', () => {
    assert.equal(
      refusal(restricted, { hostNetwork: true, containers: [web] }),
      'pods "web" is forbidden: violates PodSecurity "restricted:latest": host namespaces (hostNetwork=true), allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });
  test('host namespaces and ports, sorted as strings', () => {
    const spec: JsonObject = {
      hostNetwork: true,
      containers: [
        { ...web, ports: [{ containerPort: 8080, hostPort: 8080 }] },
        { name: 'side', image: 'busybox', ports: [{ containerPort: 443, hostPort: 443 }] },
      ],
    };
    assert.equal(
      refusal(baseline, spec),
      'pods "web" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), hostPort (containers "web", "side" use hostPorts 443, 8080)',
    );
  });
  test('SELinux options and sysctls; probe hosts (since v1.34)', () => {
    const spec = {
      securityContext: {
        sysctls: [
          { name: 'kernel.msgmax', value: '65536' },
          { name: 'net.ipv4.tcp_syncookies', value: '1' },
        ],
        seLinuxOptions: { user: 'system_u', type: 'spc_t' },
      },
      containers: [web],
    };
    assert.equal(
      refusal(baseline, spec),
      'pods "web" is forbidden: violates PodSecurity "baseline:latest": seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set), forbidden sysctls (kernel.msgmax)',
    );
    const probe = { containers: [{ ...web, livenessProbe: { httpGet: { host: '10.0.0.1', port: 80, path: '/' } } }] };
    assert.equal(
      refusal(baseline, probe),
      'pods "web" is forbidden: violates PodSecurity "baseline:latest": probe or lifecycle host (container "web" uses probe or lifecycle host "10.0.0.1")',
    );
    assert.deepEqual(evaluatePod({ level: 'baseline', minor: 33 }, {}, probe), []);
  });
  test('versions: runAsUser is checked from v1.23; a version past the newest is judged as latest', () => {
    const spec = {
      securityContext: { runAsNonRoot: true, runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ ...web, securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
    };
    assert.deepEqual(evaluatePod({ level: 'restricted', minor: 22 }, {}, spec), []);
    assert.equal(
      refusal({ level: 'restricted', minor: 23 }, spec),
      'pods "web" is forbidden: violates PodSecurity "restricted:v1.23": runAsUser=0 (pod must not set runAsUser=0)',
    );
    assert.equal(evaluatePod({ level: 'restricted', minor: 90 }, {}, spec).length, 1);
  });
  test('volumes, AppArmor, procMount, an init container', () => {
    const ok = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
    const restrictedPod = (extra: JsonObject, containers: JsonObject[] = [{ ...web, securityContext: ok }]) => ({
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers,
      ...extra,
    });
    assert.equal(
      refusal(
        restricted,
        restrictedPod({
          volumes: [
            { name: 'host', hostPath: { path: '/var/log' } },
            { name: 'cache', emptyDir: {} },
          ],
        }),
      ),
      'pods "web" is forbidden: violates PodSecurity "restricted:latest": restricted volume types (volume "host" uses restricted volume type "hostPath")',
    );
    assert.equal(
      refusal(
        restricted,
        restrictedPod({
          initContainers: [{ name: 'setup', image: 'busybox', securityContext: { ...ok, runAsNonRoot: false } }],
        }),
      ),
      'pods "web" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (container "setup" must not set securityContext.runAsNonRoot=false)',
    );
    assert.equal(
      podSecurityWarning(
        baseline,
        evaluatePod(
          baseline,
          {},
          { containers: [{ ...web, securityContext: { appArmorProfile: { type: 'Unconfined' } } }] },
        ),
      ),
      'would violate PodSecurity "baseline:latest": forbidden AppArmor profile (container "web" must not set AppArmor profile type to "Unconfined")',
    );
    assert.equal(
      podSecurityWarning(
        baseline,
        evaluatePod(
          baseline,
          {},
          { hostUsers: false, containers: [{ ...web, securityContext: { procMount: 'Unmasked' } }] },
        ),
      ),
      'would violate PodSecurity "baseline:latest": procMount (container "web" must not set securityContext.procMount to "Unmasked")',
    );
  });
  test('each failure names the fields that make it, the containers first for what a container must set', () => {
    const [escalation, , nonRoot] = evaluatePod(restricted, {}, { containers: [web] });
    assert.equal(
      formatServerPath(escalation!.places[0]!),
      '.spec.containers[name="web"].securityContext.allowPrivilegeEscalation',
    );
    assert.equal(formatServerPath(nonRoot!.places[0]!), '.spec.containers[name="web"].securityContext.runAsNonRoot');
    assert.equal(formatServerPath(nonRoot!.places.at(-1)!), '.spec.securityContext.runAsNonRoot');
  });
  test('privileged is a level without checks', () => {
    assert.deepEqual(
      evaluatePod({ level: 'privileged', minor: undefined }, {}, { hostNetwork: true, containers: [web] }),
      [],
    );
  });
});
