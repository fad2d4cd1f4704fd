// Whether the current user may send the requests the apply sends: the API server authorizes a
// request before anything else of it (the authorization filter answers 403 before the handler reads
// the body), so a refused request is the whole answer. What is asked and answered comes from the
// cluster's SelfSubjectAccessReview (cluster/permissions.ts, into PermissionFacts); which requests
// an apply sends is said here, once, for the editor and the command line:
//
// - server-side apply: one PATCH of the object (verb `patch`); for an object that does not exist the
//   server then authorizes the create the patch makes, naming the object (apiserver
//   endpoints/handlers/patch.go createAuthorizerAttributes), so a missing object needs `create` too;
// - client-side apply (kubectl apply): a GET of the object first, whether it exists or not
//   (kubectl apply's retrieval of the current configuration), then a PATCH of an existing object or
//   a POST of a missing one; it never sends an update (PUT);
// - create (kubectl create): a POST to the collection, which names no object.
//
// Pure: the answers are handed in as plain data.
import type { ManifestResource } from '../manifest/manifest';
import { forbiddenMessage, qualifiedResource } from '../ssa/messages';
import type { ApplyMode } from '../ssa/predict';
import type { PermissionAnswer, PermissionFacts, PermissionVerb } from './facts';

/** One request of the apply, as authorization sees it. */
export interface PermissionRequest {
  readonly verb: PermissionVerb;
  /** The request names the object (a Role's resourceNames can allow it). */
  readonly named: boolean;
}

/** The requests the apply sends, in the order it sends them (the first refused is the answer). */
export function permissionRequests(mode: ApplyMode, exists: boolean): PermissionRequest[] {
  switch (mode) {
    case 'serverSide':
      return exists
        ? [{ verb: 'patch', named: true }]
        : [
            { verb: 'patch', named: true },
            { verb: 'create', named: true },
          ];
    case 'clientSide':
      return [{ verb: 'get', named: true }, exists ? { verb: 'patch', named: true } : { verb: 'create', named: false }];
    case 'create':
      return [{ verb: 'create', named: false }];
  }
}

/** Every request any mode may send of an object that exists or not: what the cluster layer asks about. */
export function permissionQuestions(exists: boolean): PermissionRequest[] {
  const seen = new Map<string, PermissionRequest>();
  for (const mode of ['serverSide', 'clientSide', 'create'] as const)
    for (const r of permissionRequests(mode, exists)) seen.set(`${r.verb}/${r.named}`, r);
  return [...seen.values()];
}

export type PermissionJudgement =
  /** Nothing to say: every request allowed, not asked (a snapshot), or not answered yet. */
  | { readonly state: 'silent' }
  /** The first request the server refuses. */
  | { readonly state: 'denied'; readonly request: PermissionRequest; readonly reason?: string }
  /** No request refused, but the review of some could not be had. */
  | { readonly state: 'unknown'; readonly requests: readonly PermissionRequest[]; readonly reason: string };

export function judgePermission(
  facts: PermissionFacts | undefined,
  mode: ApplyMode,
  exists: boolean,
): PermissionJudgement {
  if (!facts) return { state: 'silent' };
  const unknown: { request: PermissionRequest; answer: PermissionAnswer | undefined }[] = [];
  for (const request of permissionRequests(mode, exists)) {
    const answer = facts.answers.find((a) => a.verb === request.verb && a.named === request.named);
    if (answer?.state === 'denied')
      return { state: 'denied', request, ...(answer.reason ? { reason: answer.reason } : {}) };
    if (answer?.state === 'pending') return { state: 'silent' };
    if (answer?.state !== 'allowed') unknown.push({ request, answer });
  }
  if (unknown.length === 0) return { state: 'silent' };
  return {
    state: 'unknown',
    requests: unknown.map((u) => u.request),
    reason: unknown.find((u) => u.answer?.reason)?.answer?.reason ?? 'the cluster was not asked',
  };
}

/** What the mode's command is called in a message. */
export function commandOf(mode: ApplyMode): string {
  return mode === 'serverSide'
    ? 'kubectl apply --server-side'
    : mode === 'clientSide'
      ? 'kubectl apply'
      : 'kubectl create';
}

/** The object a refused request is about, as the server's message needs it. */
export interface RefusedTarget {
  readonly group: string;
  readonly resource: string;
  /** '' for a cluster-scoped kind. */
  readonly namespace: string;
}

/**
 * The finding's words: the server's own message when the cluster named the user, else the same
 * sentence about "the current user" (and no server message, since the server would name someone).
 */
export function forbiddenWords(
  resource: ManifestResource,
  target: RefusedTarget,
  request: PermissionRequest,
  mode: ApplyMode,
  user: string | undefined,
  reason: string | undefined,
): { message: string; serverMessage?: string } {
  const name = request.named ? resource.name : undefined;
  const what = {
    verb: request.verb,
    group: target.group,
    resource: target.resource,
    ...(target.namespace ? { namespace: target.namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(reason ? { reason } : {}),
  };
  const step =
    mode === 'clientSide' && request.verb === 'get'
      ? 'its first request, the GET of the live object,'
      : mode === 'serverSide' && request.verb === 'create'
        ? 'the create of the missing object its patch makes'
        : `its ${request.verb === 'create' ? 'POST' : 'PATCH'}`;
  const when =
    mode === 'serverSide' && request.verb === 'create'
      ? 'which the server checks as it stores the new object'
      : 'which the server checks before anything else of the object';
  const why = `${commandOf(mode)} is refused (403 Forbidden): ${step} needs the ${request.verb} permission, ${when}`;
  if (user !== undefined) {
    const serverMessage = forbiddenMessage({ ...what, user });
    return { message: `${serverMessage} — ${why}`, serverMessage };
  }
  const where = target.namespace ? ` in the namespace ${JSON.stringify(target.namespace)}` : ' at the cluster scope';
  return {
    message: `The current user cannot ${request.verb} ${qualifiedResource(target)}${name !== undefined ? ` ${JSON.stringify(name)}` : ''}${where} — ${why}`,
  };
}
