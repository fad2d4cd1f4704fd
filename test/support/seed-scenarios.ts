// Named histories: each builder writes an object through the real API the way real tools would, and
// returns the manifest the user would hold plus the live object, so a test (or a fixture capture)
// can ask the server what applying that manifest now answers.
import { installWidgetCrd, widget } from './seed-crd';
import {
  apply,
  autoscale,
  clientSideApply,
  configMap,
  type Connection,
  create,
  get,
  kubectlEdit,
  type KubeObject,
  objectOf,
  patch,
  webDeployment,
} from './seed';

export interface Scenario {
  /** What the user's file says (the configuration last applied, unless noted). */
  manifest: KubeObject;
  /** The object as stored after the whole history. */
  live: KubeObject;
}

async function live(conn: Connection, obj: KubeObject): Promise<KubeObject> {
  return objectOf(await get(conn, obj), `read ${obj.kind} ${obj.metadata.name}`);
}

/**
 * The acceptance story of issue 3: `kubectl apply --server-side` of a Deployment (replicas 3,
 * nginx:1.25), a hand `kubectl edit` of the image, then an autoscaler scaling to 5 through the scale
 * subresource. Re-applying the manifest conflicts on .spec.replicas and on the image.
 */
export async function editedAndAutoscaled(conn: Connection, namespace: string, name = 'web'): Promise<Scenario> {
  const manifest = webDeployment(namespace, name);
  objectOf(await apply(conn, 'kubectl', manifest), 'apply as kubectl');
  objectOf(
    await kubectlEdit(conn, manifest, {
      spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } } },
    }),
    'kubectl edit',
  );
  await autoscale(conn, manifest, 5);
  return { manifest, live: await live(conn, manifest) };
}

/**
 * A Deployment applied as `kubectl`, a HorizontalPodAutoscaler (`hpa`) targeting it that scales it
 * through `/scale` as the autoscaler does (`kube-controller-manager`), then its image changed with
 * `kubectl edit`: what forcing the manifest would take, and from whom.
 */
export async function autoscaledAndEdited(
  conn: Connection,
  namespace: string,
  hpa: string,
  name = 'web',
): Promise<Scenario> {
  const manifest = webDeployment(namespace, name);
  objectOf(await apply(conn, 'kubectl', manifest), 'kubectl apply --server-side');
  objectOf(
    await create(conn, 'kubectl-create', {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: hpa, namespace },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name }, minReplicas: 2, maxReplicas: 10 },
    }),
    'create the autoscaler',
  );
  await autoscale(conn, manifest, 5);
  objectOf(
    await kubectlEdit(conn, manifest, {
      spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } } },
    }),
    'kubectl edit',
  );
  return { manifest, live: await live(conn, manifest) };
}

/**
 * Plain `kubectl apply` twice: created with the last-applied annotation, then re-applied with a new
 * image and without the `tier` label. All fields belong to `kubectl-client-side-apply` (Update).
 */
export async function clientSideApplied(
  conn: Connection,
  namespace: string,
  name = 'api',
): Promise<Scenario & { first: KubeObject }> {
  const first = webDeployment(namespace, name);
  first.metadata.labels = { app: name, tier: 'backend' };
  objectOf(await clientSideApply(conn, first), 'client-side apply (create)');
  const manifest = webDeployment(namespace, name, { image: 'nginx:1.27' });
  objectOf(await clientSideApply(conn, manifest), 'client-side apply (patch)');
  return { first, manifest, live: await live(conn, manifest) };
}

/** `helm install`: Server-Side Apply as `helm` of a Deployment and its ConfigMap, with Helm's marks. */
export async function helmInstalled(
  conn: Connection,
  namespace: string,
  release = 'shop',
): Promise<{ deployment: Scenario; config: Scenario }> {
  const helmLabels = { 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/instance': release };
  const helmAnnotations = { 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': namespace };
  const deployment = webDeployment(namespace, `${release}-web`, { replicas: 2 });
  deployment.metadata.labels = { ...deployment.metadata.labels, ...helmLabels };
  deployment.metadata.annotations = helmAnnotations;
  const config = configMap(namespace, `${release}-config`, { 'log.level': 'info' }, helmLabels);
  config.metadata.annotations = helmAnnotations;
  objectOf(await apply(conn, 'helm', config), 'apply as helm');
  objectOf(await apply(conn, 'helm', deployment), 'apply as helm');
  return {
    deployment: { manifest: deployment, live: await live(conn, deployment) },
    config: { manifest: config, live: await live(conn, config) },
  };
}

/** An Argo CD sync with server-side apply: `argocd-controller` applies, with its tracking annotation. */
export async function argoSynced(conn: Connection, namespace: string, app = 'guestbook'): Promise<Scenario> {
  const manifest = webDeployment(namespace, `${app}-ui`, { image: 'nginx:1.25-alpine' });
  manifest.metadata.labels = { ...manifest.metadata.labels, 'app.kubernetes.io/instance': app };
  manifest.metadata.annotations = { 'argocd.argoproj.io/tracking-id': `${app}:apps/Deployment:${namespace}/${app}-ui` };
  objectOf(await apply(conn, 'argocd-controller', manifest), 'apply as argocd-controller');
  return { manifest, live: await live(conn, manifest) };
}

/**
 * An object without managedFields, like one written before field tracking existed: created by
 * `kubectl create`, then its managedFields cleared (a list with one empty entry resets them; an empty
 * list would not — see the Server-Side Apply documentation, "Clearing managedFields"). The next apply
 * records a `before-first-apply` Update entry owning every field that existed.
 */
export async function managedFieldsReset(
  conn: Connection,
  namespace: string,
  name = 'legacy-settings',
): Promise<Scenario> {
  const manifest = configMap(namespace, name, { mode: 'legacy', retries: '3' });
  objectOf(await create(conn, 'kubectl-create', manifest), 'kubectl create');
  objectOf(
    await patch(conn, 'kubectl-patch', manifest, { metadata: { managedFields: [{}] } }, { type: 'merge' }),
    'reset managedFields',
  );
  return { manifest, live: await live(conn, manifest) };
}

/**
 * More than ten Update managers: the server keeps at most ten Update entries and merges the oldest into
 * one named `ancient-changes` (k8s.io/apimachinery/pkg/util/managedfields/internal/capmanagers.go).
 * Apply entries are never merged.
 */
export async function ancientChanges(
  conn: Connection,
  namespace: string,
  writers = 12,
  name = 'busy-settings',
): Promise<Scenario & { writerNames: string[] }> {
  const manifest = configMap(namespace, name, { owner: 'platform' });
  objectOf(await apply(conn, 'kubectl', manifest), 'apply as kubectl');
  const writerNames: string[] = [];
  for (let i = 1; i <= writers; i++) {
    const writer = `label-writer-${String(i).padStart(2, '0')}`;
    writerNames.push(writer);
    objectOf(
      await patch(conn, writer, manifest, { metadata: { labels: { [writer]: 'seen' } } }, { type: 'merge' }),
      `label as ${writer}`,
    );
  }
  return { manifest, live: await live(conn, manifest), writerNames };
}

/**
 * A Widget (see seed-crd.ts) applied as `kubectl` with every merge kind, then changed by an operator
 * (Update, merge patch as `widget-operator`) and scaled through its scale subresource by
 * `kube-controller-manager`.
 */
export async function widgetWithHistory(conn: Connection, namespace: string, name = 'gadget'): Promise<Scenario> {
  await installWidgetCrd(conn);
  const manifest = widget(namespace, name, {
    replicas: 1,
    size: 'small',
    ports: [
      { name: 'http', port: 80 },
      { name: 'dns', protocol: 'UDP', port: 53 },
    ],
    tags: ['blue', 'fast'],
    command: ['serve', '--verbose'],
    selector: { app: name, tier: 'edge' },
    endpoint: { host: 'gadget.local', port: 443 },
    config: { mode: 'safe', color: 'blue' },
  });
  objectOf(await apply(conn, 'kubectl', manifest), 'apply Widget as kubectl');
  objectOf(
    await patch(
      conn,
      'widget-operator',
      manifest,
      { spec: { config: { mode: 'turbo' }, size: 'large' } },
      { type: 'merge' },
    ),
    'widget-operator update',
  );
  await autoscale(conn, manifest, 4);
  return { manifest, live: await live(conn, manifest) };
}
