// The words the product uses for GitOps controllers: who applies an object (as its live metadata
// says), the policy of the controller's object that applies it (an Argo CD Application, a Flux
// Kustomization or HelmRelease), and the request such a controller sends. Plain data: the cluster
// layer reads, the core judges, the editor and the command line show.

/** The tools whose applies the product knows how to predict. */
export type ApplierKind = 'argocd' | 'flux-kustomize' | 'flux-helm' | 'helm';

/** One sign, on the live object, that a tool applies it. */
export interface ApplierSighting {
  readonly kind: ApplierKind;
  /**
   * The Application, Kustomization, HelmRelease or Helm release named by the sign; '' when only the
   * controller's field manager was seen, and no mark on the object names which of its objects applies it.
   */
  readonly name: string;
  /** Its namespace, where the sign says it (Argo CD's tracking id may not: then the controller's). */
  readonly namespace?: string;
  /** What was seen, for the user: `annotation argocd.argoproj.io/tracking-id`, `manager kustomize-controller`. */
  readonly evidence: string;
  /** A weak sign that other tools write too (Argo CD's `app.kubernetes.io/instance` label, which Helm charts set). */
  readonly maybe?: true;
}

/** An Argo CD `ignoreDifferences` entry, as the Application writes it. */
export interface ArgoIgnoreRule {
  readonly group?: string;
  readonly kind: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly jsonPointers: readonly string[];
  readonly jqPathExpressions: readonly string[];
  readonly managedFieldsManagers: readonly string[];
}

export interface ArgoApplicationPolicy {
  readonly kind: 'argocd';
  readonly name: string;
  readonly namespace: string;
  /** syncPolicy.automated is set (and not disabled). */
  readonly automated: boolean;
  readonly selfHeal: boolean;
  readonly prune: boolean;
  /** syncOptions ServerSideApply=true: `kubectl apply --server-side --force-conflicts` as argocd-controller. */
  readonly serverSideApply: boolean;
  /** syncOptions RespectIgnoreDifferences=true: ignoreDifferences also changes what is applied. */
  readonly respectIgnoreDifferences: boolean;
  readonly ignoreDifferences: readonly ArgoIgnoreRule[];
  /** The source path(s) in the repository, and the repository URL(s). */
  readonly sources: readonly { readonly repoURL: string; readonly path?: string; readonly chart?: string }[];
}

export interface FluxKustomizationPolicy {
  readonly kind: 'flux-kustomize';
  readonly name: string;
  readonly namespace: string;
  /** spec.interval as written (`10m`). */
  readonly interval: string;
  readonly suspend: boolean;
  readonly force: boolean;
  readonly prune: boolean;
  /** spec.path in the source. */
  readonly path: string;
}

export type HelmDriftMode = 'disabled' | 'warn' | 'enabled';

export interface FluxHelmReleasePolicy {
  readonly kind: 'flux-helm';
  readonly name: string;
  readonly namespace: string;
  readonly interval: string;
  readonly suspend: boolean;
  readonly driftDetection: HelmDriftMode;
}

export type ApplierPolicy = ArgoApplicationPolicy | FluxKustomizationPolicy | FluxHelmReleasePolicy;

/** The policy as read, or why it is not known (the CRD is absent, reading is forbidden): never a guess. */
export type PolicyFacts =
  | { readonly state: 'read'; readonly policy: ApplierPolicy }
  | { readonly state: 'unknown'; readonly sighting: ApplierSighting; readonly reason: string };

/** Flux's per-object `kustomize.toolkit.fluxcd.io/ssa` annotation. */
export type FluxSsaMode = 'Override' | 'Merge' | 'IfNotPresent' | 'Ignore';

/**
 * The request a controller sends for one object, as the prediction models it: the applier, its field
 * manager, and what its policy and the object's annotations change.
 */
export type ControllerRequest =
  | {
      readonly applier: 'argocd-client-side';
      readonly fieldManager: string;
      /** ignoreDifferences entries that apply to the object, honoured only with RespectIgnoreDifferences. */
      readonly ignore?: readonly ArgoIgnoreRule[];
      readonly respectIgnoreDifferences?: boolean;
    }
  | {
      readonly applier: 'argocd-server-side';
      readonly fieldManager: string;
      /** ignoreDifferences entries that apply to the object, honoured only with RespectIgnoreDifferences. */
      readonly ignore: readonly ArgoIgnoreRule[];
      readonly respectIgnoreDifferences: boolean;
      /**
       * The client-side apply manager's fields move to the field manager first (kubectl's and
       * Argo CD's ClientSideApplyMigration, on by default); false: never.
       */
      readonly clientSideApplyMigration?: boolean;
    }
  | {
      readonly applier: 'flux-kustomize';
      readonly fieldManager: string;
      /** The manifest's `kustomize.toolkit.fluxcd.io/ssa`, when the caller has read it (else read here). */
      readonly ssa?: FluxSsaMode;
      /** The Kustomization applying it: its name and namespace label every object it applies. */
      readonly kustomization?: { readonly name: string; readonly namespace: string };
      /** The Kustomization's `spec.ignore` paths (JSON pointers) whose rules select the object. */
      readonly ignorePaths?: readonly string[];
    }
  | {
      readonly applier: 'flux-helm';
      readonly fieldManager: string;
      /** The Helm release: Helm labels and annotates every object it applies with it. */
      readonly release?: { readonly name: string; readonly namespace: string };
    };

/**
 * Who sends the manifests, as the user names it (`check --applier`, the `kubeConflictHints.applier`
 * setting): `kubectl` (the default: `kubectl apply` in the chosen mode), `helm` (Helm 4's
 * server-side apply as the field manager `helm`), `argocd` (Argo CD's default client-side sync),
 * `argocd-ssa` (Argo CD with `ServerSideApply=true`), `flux` (Flux kustomize-controller), `flux-helm`
 * (Flux helm-controller). `auto` (the setting's default) detects it from the cluster.
 */
export const applierNames = ['kubectl', 'helm', 'argocd', 'argocd-ssa', 'flux', 'flux-helm'] as const;
export type ApplierName = (typeof applierNames)[number];
export type ApplierSetting = ApplierName | 'auto';

/** The appliers that force their apply: a GitOps controller. */
export type ControllerName = Exclude<ApplierName, 'kubectl' | 'helm'>;

export function isControllerName(name: string): name is ControllerName {
  return name === 'argocd' || name === 'argocd-ssa' || name === 'flux' || name === 'flux-helm';
}

/**
 * The GitOps controller that sends a file's objects (set by the user, or detected from the
 * controller's object whose source path holds the file), with that object's policy when known.
 */
export interface ControllerApplier {
  readonly name: ControllerName;
  /** The Application, Kustomization or HelmRelease that applies the file, when detected or read. */
  readonly policy?: ApplierPolicy;
  /** How it was chosen, for the user: `--applier flux`, `Flux Kustomization flux-system/apps (path ./apps)`. */
  readonly because: string;
}
