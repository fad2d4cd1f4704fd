// What the connections of one process share whatever context, user or server they are for: the
// OpenAPI v3 documents that name their content, what is built from a document (the schema the
// predictor walks, a custom kind's validation rules), and the TLS contexts made of the same
// certificates and keys. A fleet of contexts usually runs one
// Kubernetes version, so ten contexts would otherwise read, parse and build the same documents ten
// times (the command line's `check --context a --context b …`, the editor's several contexts).
//
// A document is shared by the URL the server's index gives it (`/openapi/v3/apis/apps/v1?hash=…`),
// and only once its text was found to be the one the hash names: kube-apiserver's hash is the
// SHA-512 of the document as served, in upper-case hex (kube-openapi pkg/handler3 computeETag).
// A server whose text does not hash to its URL (an aggregated server that merges others' hashes,
// a proxy that rewrites the answer) keeps its document to its own connection, as before. So a
// document from one server can be served to another only when both name the same content; never by
// context name, never by server. Schemas and rules are kept by the document object itself: two
// connections share them exactly when they share the document.
import { createHash } from 'node:crypto';
import type { SecureContext } from 'node:tls';
import type { JsonObject } from '../core/json';
import { celSchemaFor, type CelNode } from '../core/cel/schema';
import { schemaOfDocuments, type SchemaModel } from '../core/ssa/schema';

export interface ClusterShare {
  /** The document a connection of this process read at this content-named URL. */
  document(url: string): JsonObject | undefined;
  /** Keeps a document for every connection; only one whose text was checked against its URL's hash. */
  keep(url: string, document: JsonObject): void;
  /** The schema of a document, with the documents of the versions other managers wrote at: built once per set. */
  schema(document: JsonObject, others?: readonly JsonObject[]): SchemaModel;
  /** A kind's validation rules in a document (x-kubernetes-validations), read once per document and kind. */
  rules(document: JsonObject, apiVersion: string, kind: string): CelNode | undefined;
  /**
   * TLS contexts by the material they are made of (http.ts materialKey: the certificate authority,
   * client certificate and key, TLS name): the same material is parsed once for every connection.
   */
  readonly secureContexts: Map<string, SecureContext | undefined>;
  /** How often a schema was built and a document served to a connection that did not read it (tests ask). */
  readonly counts: { readonly schemasBuilt: number; readonly documentsShared: number };
}

/** The content hash a document's URL carries (`?hash=…`), when it carries one that can be one. */
export function contentHashOf(url: string): string | undefined {
  const query = url.split('?', 2)[1];
  if (query === undefined) return undefined;
  const hash = new URLSearchParams(query).get('hash');
  return hash !== null && /^[0-9A-Fa-f]{128}$/.test(hash) ? hash.toUpperCase() : undefined;
}

/** Whether `text`, as served, is the content the URL's hash names (SHA-512, as kube-apiserver computes it). */
export function namesContent(url: string, text: string): boolean {
  const hash = contentHashOf(url);
  return hash !== undefined && createHash('sha512').update(text, 'utf8').digest('hex').toUpperCase() === hash;
}

/** Far above the group-versions of a cluster, times the versions of a fleet. */
const MAX_SHARED_DOCUMENTS = 1024;

export function createClusterShare(): ClusterShare {
  const documents = new Map<string, JsonObject>();
  const schemas = new WeakMap<JsonObject, SchemaModel>();
  const combined = new WeakMap<JsonObject, { others: readonly JsonObject[]; schema: SchemaModel }>();
  const rules = new WeakMap<JsonObject, Map<string, CelNode | undefined>>();
  const counts = { schemasBuilt: 0, documentsShared: 0 };
  const build = (docs: readonly JsonObject[]) => {
    counts.schemasBuilt++;
    return schemaOfDocuments(docs);
  };
  return {
    document(url) {
      const known = documents.get(url);
      if (known) counts.documentsShared++;
      return known;
    },
    keep(url, document) {
      if (contentHashOf(url) === undefined || documents.has(url)) return;
      documents.set(url, document);
      // A long editor session sees CRDs change: the documents kept first go first.
      if (documents.size > MAX_SHARED_DOCUMENTS) documents.delete(documents.keys().next().value!);
    },
    schema(document, others = []) {
      if (others.length > 0) {
        const known = combined.get(document);
        if (known && known.others.length === others.length && known.others.every((d, i) => d === others[i]))
          return known.schema;
        const schema = build([document, ...others]);
        combined.set(document, { others, schema });
        return schema;
      }
      let schema = schemas.get(document);
      if (!schema) schemas.set(document, (schema = build([document])));
      return schema;
    },
    rules(document, apiVersion, kind) {
      let byKind = rules.get(document);
      if (!byKind) rules.set(document, (byKind = new Map()));
      const key = `${apiVersion}\u0000${kind}`;
      if (!byKind.has(key)) byKind.set(key, celSchemaFor(document, apiVersion, kind));
      return byKind.get(key);
    },
    secureContexts: new Map(),
    counts,
  };
}
