// A CustomResourceDefinition whose schema has one field of every merge kind Server-Side Apply treats
// differently, so tests can check ownership and conflicts on CRDs, where the schema comes from the
// CRD's own x-kubernetes-* markers rather than from compiled-in Go types.
import { isJsonObject } from '../../server/src/core/json';
import { apply, get, objectOf, objectPath, request, type Connection, type KubeObject } from './seed';

export const widgetGroup = 'kch.example.com';
export const widgetApiVersion = `${widgetGroup}/v1`;
export const widgetCrdName = `widgets.${widgetGroup}`;

export const widgetCrd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: widgetCrdName },
  spec: {
    group: widgetGroup,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
        },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer' },
                  size: { type: 'string' },
                  // map-list with two keys, one of them defaulted (like Container ports)
                  ports: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['name', 'protocol'],
                    items: {
                      type: 'object',
                      required: ['name'],
                      properties: {
                        name: { type: 'string' },
                        protocol: { type: 'string', default: 'TCP' },
                        port: { type: 'integer' },
                      },
                    },
                  },
                  // set: items are owned one by one, as v:"value"
                  tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                  // atomic list: one owner for the whole list
                  command: { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'string' } },
                  // atomic map: one owner for the whole map
                  selector: {
                    type: 'object',
                    'x-kubernetes-map-type': 'atomic',
                    additionalProperties: { type: 'string' },
                  },
                  // atomic struct
                  endpoint: {
                    type: 'object',
                    'x-kubernetes-map-type': 'atomic',
                    properties: { host: { type: 'string' }, port: { type: 'integer' } },
                  },
                  // granular map: keys are owned one by one
                  config: { type: 'object', additionalProperties: { type: 'string' } },
                },
              },
              status: { type: 'object', properties: { replicas: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
};

/**
 * Installs the Widget CRD (idempotent) and returns once it is Established and served, i.e. once
 * objects of it can be written.
 */
export async function installWidgetCrd(conn: Connection): Promise<KubeObject> {
  objectOf(await apply(conn, 'kch-test-setup', widgetCrd, { force: true }), 'install Widget CRD');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const crd = objectOf(await get(conn, widgetCrd), 'read Widget CRD');
    const conditions =
      (crd.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) {
      const served = await objectPath(conn, {
        apiVersion: widgetApiVersion,
        kind: 'Widget',
        metadata: { name: 'probe' },
      }).then(
        () => true,
        () => false,
      );
      if (served) return crd;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${widgetCrdName} not Established and served after 30 s`);
}

export function widget(namespace: string, name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: widgetApiVersion, kind: 'Widget', metadata: { name, namespace }, spec };
}

/**
 * The server publishes a new CRD's OpenAPI v3 (and serves its objects) a moment after the CRD is
 * Established: wait until the index lists every group-version of `keys` (`apis/GROUP/VERSION`).
 */
export async function waitForOpenApi(conn: Connection, keys: readonly string[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const index = await request(conn, 'GET', '/openapi/v3');
    const paths = isJsonObject(index.body) && isJsonObject(index.body.paths) ? index.body.paths : {};
    const missing = keys.filter((k) => !(k in paths));
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`OpenAPI v3 still lacks ${missing.join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
