// Users allowed exactly what a test grants: a ServiceAccount with Roles (or ClusterRoles) and their
// bindings, made as admin, its token from the TokenRequest API and a kubeconfig of its own. The
// token is the API server's own credential for that account (`system:serviceaccount:NS:NAME`),
// so RBAC judges it as it judges any user; nothing here uses product code.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { create, objectOf, request, type Connection } from './seed';

/** One RBAC rule, as a Role writes it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** What the account may do: rules in namespaces (a Role and RoleBinding each), and at the cluster scope. */
export interface Grants {
  namespaced?: { namespace: string; rules: PolicyRule[] }[];
  cluster?: PolicyRule[];
}

export interface AccessUser {
  /** The name the API server knows it by: system:serviceaccount:NS:NAME. */
  username: string;
  /** A kubeconfig with one context, `access`, the account's token and the test cluster's CA. */
  kubeconfig: string;
  context: string;
  /** Removes the kubeconfig (the account lives and dies with its namespace; cluster roles are removed). */
  cleanup(): Promise<void>;
}

/**
 * A ServiceAccount `name` in `home` (which must exist), bound to `grants`, with a token valid for an
 * hour. `admin` makes everything.
 */
export async function accessUser(admin: Connection, home: string, name: string, grants: Grants): Promise<AccessUser> {
  const setup = 'kch-test-access';
  const username = `system:serviceaccount:${home}:${name}`;
  const subject = [{ kind: 'ServiceAccount', name, namespace: home }];
  objectOf(
    await create(admin, setup, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: home } }),
    `serviceaccount ${name}`,
  );
  for (const [i, grant] of (grants.namespaced ?? []).entries()) {
    const roleName = `${name}-${i}`;
    objectOf(
      await create(admin, setup, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: roleName, namespace: grant.namespace },
        rules: grant.rules,
      }),
      `role ${roleName}`,
    );
    objectOf(
      await create(admin, setup, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: roleName, namespace: grant.namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
        subjects: subject,
      }),
      `rolebinding ${roleName}`,
    );
  }
  const clusterRole = `kch-access-${home}-${name}`;
  if (grants.cluster) {
    objectOf(
      await create(admin, setup, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: clusterRole },
        rules: grants.cluster,
      }),
      `clusterrole ${clusterRole}`,
    );
    objectOf(
      await create(admin, setup, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: clusterRole },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
        subjects: subject,
      }),
      `clusterrolebinding ${clusterRole}`,
    );
  }
  const answer = await request(admin, 'POST', `/api/v1/namespaces/${home}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const token = (answer.body as { status?: { token?: string } } | undefined)?.status?.token;
  if (answer.status !== 201 || !token)
    throw new Error(`TokenRequest for ${username}: ${answer.status} ${JSON.stringify(answer.body)}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-access-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(
    kubeconfig,
    stringifyYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'test',
          cluster: { server: admin.server, 'certificate-authority-data': Buffer.from(admin.ca).toString('base64') },
        },
      ],
      users: [{ name: 'access', user: { token } }],
      contexts: [{ name: 'access', context: { cluster: 'test', user: 'access', namespace: home } }],
      'current-context': 'access',
    }),
    { mode: 0o600 },
  );
  return {
    username,
    kubeconfig,
    context: 'access',
    cleanup: async () => {
      fs.rmSync(dir, { recursive: true, force: true });
      if (grants.cluster) {
        await request(admin, 'DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${clusterRole}`);
        await request(admin, 'DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${clusterRole}`);
      }
    },
  };
}
