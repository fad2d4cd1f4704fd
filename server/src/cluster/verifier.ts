// The verifier: ask the real API server what an apply (a create, an update) would answer, without
// changing anything. With the Secret probe of secret-fields.ts and the access reviews of
// permissions.ts, the only code in the product that sends a PATCH or a POST; all go through
// ClusterTransport as DryRunWrite requests, which always carry dryRun=All.
//
// A dry-run apply runs the same admission and field-manager code as a real one
// (apiserver/pkg/endpoints/handlers/patch.go), so its 409 causes are exactly a real apply's.
//
// The server answers an accepted dry run with the would-be object. For a Secret that object holds
// the values (the manifest's, merged with the live ones it does not set), and its metadata holds
// them again when a client-side `kubectl apply` wrote the last-applied annotation, so a Secret's dry
// run asks for a Table without the object (secret-fields.ts's form): its values never come back,
// and an accepted answer is only the Secret's name and the would-be resourceVersion.
import { isJsonObject, type JsonObject } from '../core/json';
import { placeInNamespace, type NamespaceOrigin } from '../core/manifest/manifest';
import type { Discovery } from './discovery';
import type { ClusterTransport, DryRunWrite } from './http';
import { readsMetadataOnly } from './live-objects';
import { checkObjectName, collectionPath, objectPath } from './names';
import { classifyFailure, parseJson, parseStatus } from './problems';
import { qualifiedResource } from '../core/ssa/messages';
import { secretTable } from './secret-fields';
import type { ApiResourceInfo, ClusterResult, DryRunOutcome } from './types';

export interface DryRunApplyOptions {
  /** The field manager of the apply (kubectl --server-side uses "kubectl"). */
  fieldManager: string;
  /** Namespace for a manifest without metadata.namespace. */
  defaultNamespace: string;
  /** `Strict` makes unknown or duplicate fields an error, as kubectl does by default. */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

/**
 * The manifest to send: the parsed object, and optionally its original text. The text (YAML or
 * JSON) is what the server decodes, so duplicate keys and formatting reach it exactly as written.
 * The product sends the object, as kubectl does (cluster/dry-run.ts dryRunManifestOf says why: a
 * YAML patch body is also one the API server cannot write to its audit log).
 */
export interface DryRunManifest {
  object: JsonObject;
  text?: string;
}

export class Verifier {
  constructor(
    private readonly transport: ClusterTransport,
    private readonly discovery: Discovery,
  ) {}

  /** `kubectl apply --server-side --dry-run=server` (force=false): the would-be object or the 409 causes. */
  async dryRunApply(manifest: DryRunManifest, options: DryRunApplyOptions): Promise<DryRunOutcome> {
    const target = await this.target(manifest.object, options.defaultNamespace);
    if (!target.ok) return { outcome: 'rejected', problem: target.problem, causes: [] };
    const { resource, namespace, name, origin } = target.value;
    if (!name) {
      return { outcome: 'rejected', problem: { kind: 'other', message: 'An apply needs metadata.name.' }, causes: [] };
    }
    const path = objectPath(resource, namespace, name, origin);
    if (!path.ok) return { outcome: 'rejected', problem: path.problem, causes: [] };
    return this.send(
      {
        method: 'PATCH',
        dryRun: 'All',
        path: path.value,
        query: {
          fieldManager: options.fieldManager,
          force: 'false',
          ...(options.fieldValidation ? { fieldValidation: options.fieldValidation } : {}),
        },
        contentType: 'application/apply-patch+yaml',
        // JSON is YAML, so the parsed object can stand in when there is no text.
        body: manifest.text ?? JSON.stringify(manifest.object),
      },
      resource,
      namespace,
      'patch',
    );
  }

  /** `kubectl create --dry-run=server`: AlreadyExists comes back as a conflict. */
  async dryRunCreate(manifest: DryRunManifest, options: DryRunApplyOptions): Promise<DryRunOutcome> {
    const target = await this.target(manifest.object, options.defaultNamespace);
    if (!target.ok) return { outcome: 'rejected', problem: target.problem, causes: [] };
    const { resource, namespace, name, origin } = target.value;
    const path = collectionPath(resource, namespace, origin);
    if (!path.ok) return { outcome: 'rejected', problem: path.problem, causes: [] };
    // The name travels in the body here, not the URL; the server would still refuse it.
    const refused = name ? checkObjectName(resource, name) : undefined;
    if (refused) return { outcome: 'rejected', problem: refused, causes: [] };
    const text = manifest.text;
    return this.send(
      {
        method: 'POST',
        dryRun: 'All',
        path: path.value,
        query: {
          fieldManager: options.fieldManager,
          ...(options.fieldValidation ? { fieldValidation: options.fieldValidation } : {}),
        },
        contentType: text !== undefined && !looksLikeJson(text) ? 'application/yaml' : 'application/json',
        body: text ?? JSON.stringify(manifest.object),
      },
      resource,
      namespace,
      'create',
    );
  }

  /**
   * An update as a client-side `kubectl apply` or Helm 3 sends one to an object that exists: a
   * strategic-merge PATCH of the object as `fieldManager` (an Update in managedFields, so never a
   * field conflict; the optimistic lock only when the object names its resourceVersion). A kind
   * the server has no strategic-merge schema for (a custom resource: 415) gets a JSON merge patch,
   * as those clients send it.
   */
  async dryRunPatch(manifest: DryRunManifest, options: DryRunApplyOptions): Promise<DryRunOutcome> {
    const target = await this.target(manifest.object, options.defaultNamespace);
    if (!target.ok) return { outcome: 'rejected', problem: target.problem, causes: [] };
    const { resource, namespace, name, origin } = target.value;
    if (!name) {
      return { outcome: 'rejected', problem: { kind: 'other', message: 'An update needs metadata.name.' }, causes: [] };
    }
    const path = objectPath(resource, namespace, name, origin);
    if (!path.ok) return { outcome: 'rejected', problem: path.problem, causes: [] };
    const request = (contentType: string): DryRunWrite => ({
      method: 'PATCH',
      dryRun: 'All',
      path: path.value,
      query: {
        fieldManager: options.fieldManager,
        ...(options.fieldValidation ? { fieldValidation: options.fieldValidation } : {}),
      },
      contentType,
      body: JSON.stringify(manifest.object),
    });
    const strategic = await this.send(request('application/strategic-merge-patch+json'), resource, namespace, 'patch');
    if (strategic.outcome === 'rejected' && strategic.problem.httpStatus === 415) {
      return this.send(request('application/merge-patch+json'), resource, namespace, 'patch');
    }
    return strategic;
  }

  private async target(
    object: JsonObject,
    defaultNamespace: string,
  ): Promise<ClusterResult<{ resource: ApiResourceInfo; namespace: string; name: string; origin: NamespaceOrigin }>> {
    const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
    const kind = typeof object.kind === 'string' ? object.kind : '';
    if (!apiVersion || !kind)
      return { ok: false, problem: { kind: 'other', message: 'The manifest needs apiVersion and kind.' } };
    const resource = await this.discovery.resolve(apiVersion, kind);
    if (!resource.ok) return resource;
    const metadata = isJsonObject(object.metadata) ? object.metadata : {};
    const { namespace, origin } = placeInNamespace(
      resource.value.namespaced,
      typeof metadata.namespace === 'string' ? metadata.namespace : undefined,
      defaultNamespace,
    );
    const name = typeof metadata.name === 'string' ? metadata.name : '';
    return { ok: true, value: { resource: resource.value, namespace, name, origin } };
  }

  private async send(
    request: DryRunWrite,
    resource: ApiResourceInfo,
    namespace: string,
    verb: string,
  ): Promise<DryRunOutcome> {
    const tableAnswer = readsMetadataOnly(resource);
    const outcome = await this.transport.send(
      tableAnswer ? { ...request, query: { ...request.query, includeObject: 'None' }, accept: secretTable } : request,
    );
    if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) {
      const body = parseJson(outcome.body);
      if (tableAnswer && isJsonObject(body) && body.kind === 'Table')
        return { outcome: 'accepted', object: tableIdentity(resource, namespace, body) };
      if (!tableAnswer && isJsonObject(body)) return { outcome: 'accepted', object: body };
      // Another answer than the one asked for is not quoted: for a Secret, it may hold the values.
      if (tableAnswer)
        return {
          outcome: 'rejected',
          problem: {
            kind: 'other',
            message: `The server did not answer the dry run of ${qualifiedResource(resource)} as a Table.`,
            httpStatus: outcome.status,
          },
          causes: [],
        };
    }
    if (outcome.kind === 'response' && outcome.status === 409) {
      const status = parseStatus(outcome.body);
      const message = status?.message ?? outcome.body;
      return {
        outcome: 'conflict',
        conflict: conflictKind(status?.reason ?? '', message, status?.causes.length ?? 0),
        message,
        reason: status?.reason ?? 'Conflict',
        causes: status?.causes ?? [],
      };
    }
    const problem = classifyFailure(outcome, {
      method: request.method,
      path: request.path,
      verb,
      resource: qualifiedResource(resource),
      ...(namespace ? { namespace } : {}),
    });
    const causes = outcome.kind === 'response' ? (parseStatus(outcome.body)?.causes ?? []) : [];
    return { outcome: 'rejected', problem, causes };
  }
}

/**
 * Which of the three 409s (see kubernetes-409.md): the reason separates AlreadyExists; the message
 * separates an apply's field conflicts ("Apply failed with N conflict(s)", apimachinery
 * managedfields/internal/conflict.go) from the optimistic lock ("the object has been modified",
 * apiserver storage) and a uid precondition ("Precondition failed: UID in precondition").
 */
export function conflictKind(
  reason: string,
  message: string,
  causeCount: number,
): 'fieldManager' | 'alreadyExists' | 'resourceVersion' | 'uid' | 'other' {
  if (reason === 'AlreadyExists') return 'alreadyExists';
  if (/^Apply failed with \d+ conflict/.test(message) || (causeCount > 0 && message.includes('conflict')))
    return 'fieldManager';
  // An apply naming a uid that no object has: `uid mismatch`; an update or delete: `UID in precondition`.
  if (/UID in precondition|uid mismatch/i.test(message)) return 'uid';
  if (/the object has been modified/.test(message)) return 'resourceVersion';
  return 'other';
}

/** What a Table without the object says of the one object it is about: its name and resourceVersion. */
function tableIdentity(resource: ApiResourceInfo, namespace: string, table: JsonObject): JsonObject {
  const row = Array.isArray(table.rows) && isJsonObject(table.rows[0]) ? table.rows[0] : undefined;
  const name = row && Array.isArray(row.cells) && typeof row.cells[0] === 'string' ? row.cells[0] : undefined;
  const resourceVersion =
    isJsonObject(table.metadata) && typeof table.metadata.resourceVersion === 'string'
      ? table.metadata.resourceVersion
      : undefined;
  return {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    metadata: {
      ...(name !== undefined ? { name } : {}),
      ...(namespace ? { namespace } : {}),
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
    },
  };
}

function looksLikeJson(text: string): boolean {
  return /^\s*\{/.test(text);
}
