// What the analysis is given: what the cluster says about the object a manifest names (the editor
// peeks it from its live cache, the command line reads it from a cluster or a snapshot, the tests
// hand in captured fixtures), and the settings it judges with. Plain data, made by cluster/ and
// cli/, read by the rule engine (analysis.ts).
import type { AutoscalerFacts } from './force-preview';
import type { JsonObject } from '../json';
import type { CelNode } from '../cel/schema';
import type { ApplyMode } from '../ssa/predict';
import type { SchemaModel } from '../ssa/schema';
import type { KindVersions } from '../ssa/versions';
import type { ApplierSighting, ControllerApplier, PolicyFacts } from '../gitops/model';
import type { SeverityOverrides } from './finding';
import type { DefinedKind, NotServedDiscovery } from './kind-served';
import type { NamespacePolicyFacts } from './quota';
import type { WebhookFacts } from './webhooks';

/** What the cluster says of the manifest's apiVersion and kind. */
export type KindFacts =
  | { readonly state: 'pending' }
  | { readonly state: 'served'; readonly group: string; readonly resource: string; readonly namespaced: boolean }
  /**
   * `message`: the cluster layer's sentence, e.g. the versions that are served; `discovery`: what
   * the cluster serves around the kind, from which the analysis tells why (kind-served.ts).
   */
  | { readonly state: 'notServed'; readonly message: string; readonly discovery?: NotServedDiscovery }
  | { readonly state: 'unavailable'; readonly message: string };

/** What the cluster says of the object the manifest names. */
export type LiveFacts =
  | { readonly state: 'pending' }
  | { readonly state: 'exists'; readonly object: JsonObject }
  | { readonly state: 'absent' }
  | { readonly state: 'unavailable'; readonly message: string }
  /** The name or namespace is one the API server refuses, so the cluster was not asked. */
  | { readonly state: 'invalidName'; readonly field: 'metadata.name' | 'metadata.namespace'; readonly message: string };

/**
 * Whether the namespace a namespaced object goes to exists. Absent when nobody asked: a
 * cluster-scoped kind, an object that exists, a snapshot. `unknown`: not answered yet, or not
 * allowed to be read (a 403): nothing is said then.
 */
export interface NamespaceFacts {
  readonly state: 'exists' | 'missing' | 'unknown';
  readonly name: string;
  /**
   * The labels of a namespace that exists, as plain data: Pod Security admission reads its
   * `pod-security.kubernetes.io/*` labels (pod-security.ts). Asked for objects with a pod
   * template even when they exist; absent when not read.
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/** A verb of the requests an apply sends, as RBAC names it. */
export type PermissionVerb = 'get' | 'patch' | 'create';

/**
 * Whether the current user may send one request, as the cluster's SelfSubjectAccessReview answered
 * it. `named`: the request names the object (in its URL, or, for a server-side apply that creates
 * the object, in the create it is authorized as), so a Role's resourceNames can allow it; a create
 * POSTed to the collection names none. `pending`: not answered yet; `unknown`: the review itself
 * failed or was refused (`reason` says why); `denied`: `reason` is the authorizer's, when it gave one.
 */
export interface PermissionAnswer {
  readonly verb: PermissionVerb;
  readonly named: boolean;
  readonly state: 'allowed' | 'denied' | 'pending' | 'unknown';
  readonly reason?: string;
}

/**
 * What the cluster says the current user may do with the object. Absent when nobody asked (a
 * snapshot, which holds no user; an object whose kind or existence is not known).
 */
export interface PermissionFacts {
  /** The name the cluster knows the credential by (SelfSubjectReview), when it said. */
  readonly user?: string;
  /** The namespace the requests go to ('' for a cluster-scoped kind), as the reviews asked. */
  readonly namespace: string;
  readonly answers: readonly PermissionAnswer[];
}

/**
 * The ValidatingAdmissionPolicies and bindings of the cluster, and the params their bindings
 * name (admission-policy.ts judges them), as plain data. Absent when nobody asked (a snapshot, a
 * kind not served) or not read yet; `unknown` when they cannot be read (a 403, not served).
 */
export type AdmissionPolicyFacts =
  | {
      readonly state: 'known';
      readonly policies: readonly JsonObject[];
      readonly bindings: readonly JsonObject[];
      /** The params' collections read for the bindings that name them. */
      readonly params: readonly PolicyParamsFacts[];
    }
  | { readonly state: 'unknown'; readonly why: string };

/** The objects of one param kind in one namespace ('' for every namespace, or a cluster-scoped kind). */
export interface PolicyParamsFacts {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly namespaced: boolean;
  /** Undefined when they could not be read (`why`). */
  readonly objects?: readonly JsonObject[];
  readonly why?: string;
}

export interface ResourceFacts {
  readonly kind: KindFacts;
  readonly live: LiveFacts;
  readonly namespace?: NamespaceFacts;
  /** Whether the current user may send the apply's requests. */
  readonly permission?: PermissionFacts;
  /**
   * The schema of the manifest's group-version (with the group-versions the live object's
   * managers were recorded at, when the cluster serves them); undefined while it is not known.
   */
  readonly schema: SchemaModel | undefined;
  /** The kind's versions (a CRD's versions and conversion), when managers were recorded at another one. */
  readonly versions?: KindVersions;
  /** A custom kind's schema with its CRD validation rules (core/cel/schema.ts), when it has any. */
  readonly rules?: CelNode;
  /** The cluster's admission webhooks (webhooks.ts), read once per session; absent when not read. */
  readonly webhooks?: WebhookFacts;
  /** The LimitRanges and ResourceQuotas of the namespace a pod-creating object goes to (quota.ts). */
  readonly namespacePolicies?: NamespacePolicyFacts;
  /**
   * Who applies the live object, as its marks and managers say (core/gitops/appliers.ts), and the
   * policy of each Argo CD Application, Flux Kustomization or HelmRelease among them (read by
   * cluster/gitops.ts, or why it is unknown). Absent when the object does not exist or nothing
   * marks it.
   */
  readonly appliers?: ApplierFacts;
  /**
   * The HorizontalPodAutoscalers of the namespace of an object a GitOps controller applies, when its
   * kind scales (cluster/autoscalers.ts): whether the controller and an autoscaler fight over replicas.
   */
  readonly autoscalers?: AutoscalerFacts;
  /** The ValidatingAdmissionPolicies that may judge the object, with their bindings and params. */
  readonly admissionPolicies?: AdmissionPolicyFacts;
}

export interface ApplierFacts {
  readonly sightings: readonly ApplierSighting[];
  readonly policies: readonly PolicyFacts[];
}

export interface AnalysisSettings {
  readonly fieldManager: string;
  readonly applyMode: ApplyMode;
  /** The user's own severity per finding code (`off` hides the finding), as ESLint rules allow. */
  readonly severity?: SeverityOverrides;
  /**
   * The kinds that CustomResourceDefinitions among the files checked together define (a folder, a
   * stream, a render; in the editor the open documents), and the namespaces their Namespace
   * objects create: the cluster need not have them yet.
   */
  readonly definedKinds?: readonly DefinedKind[];
  /**
   * The GitOps controller that sends the manifest (`check --applier`, the applier setting, or
   * detected): its forced request is predicted instead of kubectl's (gitops-takes.ts). Absent: the
   * user's own apply in `applyMode`.
   */
  readonly controller?: ControllerApplier;
}
