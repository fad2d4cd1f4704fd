// A namespaced object whose namespace does not exist: the API server refuses to apply or create it
// with 404 NotFound, `namespaces "x" not found` (the same words for a server-side apply, a
// client-side apply's create, a create and their dry runs), before it looks at anything else of the
// object. Listing the object's collection in that namespace answers an empty list, so without this
// rule the object looks new and clean. A Namespace object among the files applied together is no
// error: it creates the namespace, provided it is sent first (kubectl sends objects in the order
// given, and an object sent before its Namespace fails). Pure: the editor and the command line
// both judge here.
import type { ManifestResource, NamespaceOrigin } from '../manifest/manifest';
import { docsLinks } from './catalogue';

/** A Namespace object among the files applied together: it creates `namespace`. */
export interface DefinedNamespace {
  readonly namespace: string;
  /** Where the Namespace is written, as the user reads it (a path, `<stdin>`, an overlay). */
  readonly file: string;
}

/** The namespaces the Namespace objects among `resources` create. */
export function definedNamespaces(resources: Iterable<ManifestResource>, file: string): DefinedNamespace[] {
  const out: DefinedNamespace[] = [];
  for (const r of resources) {
    if (r.apiVersion === 'v1' && r.kind === 'Namespace' && r.name) out.push({ namespace: r.name, file });
  }
  return out;
}

export interface MissingNamespaceJudgement {
  readonly code: 'namespace-not-found' | 'namespace-from-files';
  readonly message: string;
  /** The server's words, when it would refuse the request. */
  readonly serverMessage?: string;
  readonly docs: string;
}

/** The server's words for a write into a namespace that does not exist. */
export function namespaceNotFoundMessage(namespace: string): string {
  return `namespaces ${JSON.stringify(namespace)} not found`;
}

/**
 * The judgement on an object bound for `namespace`, which the cluster says does not exist.
 * `defined`: the namespaces the Namespace objects among the files checked together create.
 */
export function judgeMissingNamespace(
  namespace: string,
  origin: NamespaceOrigin,
  defined: readonly DefinedNamespace[],
): MissingNamespaceJudgement {
  const serverMessage = namespaceNotFoundMessage(namespace);
  const creator = defined.find((d) => d.namespace === namespace);
  const where =
    origin === 'manifest'
      ? `namespace ${JSON.stringify(namespace)}`
      : `default namespace ${JSON.stringify(namespace)} (from the namespace setting or the kubeconfig context)`;
  if (creator) {
    // Whether the Namespace is sent first depends on the order of the apply, which a folder, a
    // stream and a set of open documents do not all fix: the rule is said, not guessed.
    return {
      code: 'namespace-from-files',
      message:
        `The ${where} does not exist in the cluster yet; the Namespace in ${creator.file} creates it. ` +
        `Apply it before this object: kubectl sends objects in the order given, and an object sent before its Namespace fails (${serverMessage}).`,
      docs: docsLinks.namespaces,
    };
  }
  return {
    code: 'namespace-not-found',
    message: `${serverMessage}: the ${where} does not exist in the cluster, so the API server refuses this object (404 NotFound), applied server- or client-side or created. Create the Namespace first, or correct the namespace.`,
    serverMessage,
    docs: docsLinks.namespaces,
  };
}
