// Secret values never enter the cache, a hover or a log. They are removed the moment an object
// arrives (GET, LIST, WATCH, dry-run answers). Field *names* stay: managedFields only holds names
// (`f:data: {f:password: {}}`), and ownership of a key is what the editor shows.
import { isJsonObject, type JsonObject } from '../core/json';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const SECRET_VALUE_FIELDS = ['data', 'stringData'];

/** Whether a response for this resource carries Secrets (list items have no kind of their own). */
export function isSecretResource(group: string, resource: string): boolean {
  return group === '' && resource === 'secrets';
}

export function isSecretObject(object: JsonObject): boolean {
  return object.kind === 'Secret' && object.apiVersion === 'v1';
}

/**
 * A copy of a Secret without its values: `data`/`stringData` are dropped, and so are they inside
 * the last-applied annotation, where `kubectl apply` keeps a second copy of them.
 */
export function redactSecret(secret: JsonObject): JsonObject {
  const copy: JsonObject = { ...secret };
  for (const field of SECRET_VALUE_FIELDS) delete copy[field];
  const metadata = copy.metadata;
  if (isJsonObject(metadata) && isJsonObject(metadata.annotations) && typeof metadata.annotations[LAST_APPLIED] === 'string') {
    copy.metadata = {
      ...metadata,
      annotations: { ...metadata.annotations, [LAST_APPLIED]: redactLastApplied(metadata.annotations[LAST_APPLIED]) },
    };
  }
  return copy;
}

function redactLastApplied(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isJsonObject(parsed)) {
      for (const field of SECRET_VALUE_FIELDS) delete parsed[field];
      return JSON.stringify(parsed);
    }
  } catch {
    // Not JSON: nothing can be kept safely.
  }
  return '{}';
}
