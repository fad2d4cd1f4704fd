// The rule catalogue: every finding code the product can give, described once — its default
// severity, title, description and documentation link. The analysis takes its severities from here,
// the editor its diagnostic links, the command line its SARIF rules and annotation titles. A new
// kind of finding starts with an entry here: its code then exists everywhere (the FindingCode type
// is this catalogue's keys).

/** The severities a finding can have, from the most to the least severe: the one place they are written. */
export const severities = ['error', 'warning', 'information'] as const;
export type Severity = (typeof severities)[number];

/** Where the Kubernetes documentation explains a finding. */
export const docsLinks = {
  ssaConflicts: 'https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts',
  fieldManagement: 'https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management',
  concurrency: 'https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions',
  create: 'https://kubernetes.io/docs/reference/kubectl/generated/kubectl_create/',
  ownerReferences: 'https://kubernetes.io/docs/concepts/overview/working-with-objects/owners-dependents/',
  apiVersions: 'https://kubernetes.io/docs/reference/using-api/deprecation-guide/',
  customResources: 'https://kubernetes.io/docs/concepts/extend-kubernetes/api-extension/custom-resources/',
  crdVersions:
    'https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/',
  generateName: 'https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/object-meta/',
  syntax: 'https://kubernetes.io/docs/concepts/overview/working-with-objects/',
  namespaces: 'https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/',
  validationRules:
    'https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-rules',
  authorization: 'https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access',
  transitionRules:
    'https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#transition-rules',
  // The object the request would store: the merge, and Pod Security admission.
  storedObject: 'https://kubernetes.io/docs/reference/using-api/server-side-apply/#merge-strategy',
  podSecurity: 'https://kubernetes.io/docs/concepts/security/pod-security-admission/',
  admissionWebhooks: 'https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/',
  quota: 'https://kubernetes.io/docs/concepts/policy/resource-quotas/',
  // ValidatingAdmissionPolicy (admission-policy.ts).
  admissionPolicy: 'https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/',
} as const;

export interface FindingRule {
  /** Severity follows the consequence: the request fails (error), something surprises (warning), news (information). Users may override it per code. */
  readonly severity: Severity;
  readonly title: string;
  readonly description: string;
  readonly docs: string;
  /**
   * Judged without the cluster (the text, a render): as true while the cluster is away as when it
   * answers, so never marked as resting on old facts.
   */
  readonly withoutCluster?: true;
  /**
   * News rather than a problem (an object exists, a namespace comes with the files): an editor shows
   * it as a hint, off its list of problems, so that 300 existing objects add nothing there, unless
   * the user's severity setting names the code. The command line prints it with --verbose.
   */
  readonly quiet?: true;
  /**
   * A finding of this code means that (a part of) the file was not judged: the editor says so beside
   * the cluster's health, the command line lists it under its summary's "not judged" and does not
   * exit 0.
   */
  readonly notJudged?: true;
}

/**
 * One entry per code, in the order SARIF lists its rules. Stable codes: diagnostics carry them,
 * the command line prints them, users filter on them and override their severity.
 */
export const findingCatalogue = {
  'field-conflict': {
    severity: 'error',
    title: 'Server-Side Apply field conflict',
    description:
      'The manifest sets a field that another field manager owns with a different value: kubectl apply --server-side answers 409 Conflict.',
    docs: docsLinks.ssaConflicts,
  },
  'owned-by-release': {
    severity: 'error',
    title: 'The object belongs to another Helm release',
    description:
      "A chart renders an object that exists without this release's ownership metadata (meta.helm.sh/release-name): helm install or upgrade stops before sending anything.",
    docs: 'https://helm.sh/docs/faq/changes_since_helm2/#improved-upgrade-strategy-3-way-strategic-merge-patches',
  },
  'already-exists': {
    severity: 'error',
    title: 'The object already exists',
    description: 'kubectl create answers 409 AlreadyExists: an object of this kind and name is already in the cluster.',
    docs: docsLinks.create,
  },
  exists: {
    severity: 'information',
    title: 'The object exists',
    description: 'The object is already in the cluster; the finding names its field managers.',
    docs: docsLinks.fieldManagement,
    quiet: true,
  },
  'gitops-reverts': {
    severity: 'warning',
    title: 'A GitOps controller will take the change back',
    description:
      'The object is applied by Argo CD or Flux, whose next sync puts the field back to what Git holds (or, for Flux, removes a field kubectl set that Git does not): the change does not stay.',
    docs: docsLinks.fieldManagement,
  },
  'gitops-takes': {
    severity: 'information',
    title: 'The GitOps controller takes a field from another manager',
    description:
      "Checked as the GitOps controller's own request (check --applier, the applier setting): the controller forces its apply, so the field changes owner and value at its next sync instead of a 409.",
    docs: docsLinks.fieldManagement,
  },
  'gitops-fight': {
    severity: 'error',
    title: 'A GitOps controller and another writer fight over a field',
    description:
      'The controller applying the object from Git forces its value on its own schedule, and another active writer (an autoscaler, a second GitOps controller) sets its own again: the field flaps for good.',
    docs: docsLinks.fieldManagement,
  },
  'gitops-fight-at-sync': {
    severity: 'warning',
    title: 'A GitOps sync resets what another writer sets',
    description:
      "Each sync of the controller applying the object writes Git's value over another active writer's (an autoscaler), which sets its own again: the field jumps at every sync.",
    docs: docsLinks.fieldManagement,
  },
  'gitops-fight-unknown': {
    severity: 'information',
    title: 'Whether an autoscaler fights the GitOps controller is unknown',
    description:
      "The controller applying the object from Git sets its replicas, but the namespace's HorizontalPodAutoscalers could not be read (the user may not list them, the cluster did not answer): whether one sets the replicas back, and the object flaps, is unknown.",
    docs: docsLinks.fieldManagement,
    quiet: true,
  },

  'context-drift': {
    severity: 'information',
    title: 'The object differs between clusters',
    description:
      'Checked against several contexts, a field the manifest sets has another live value, or other owners, in one cluster than in another: what works in one may not in the next.',
    docs: docsLinks.fieldManagement,
  },
  'stale-resource-version': {
    severity: 'error',
    title: 'Stale metadata.resourceVersion',
    description:
      'The manifest carries a resourceVersion the object has moved past: the optimistic lock answers 409 Conflict.',
    docs: docsLinks.concurrency,
  },
  'uid-mismatch': {
    severity: 'error',
    title: 'metadata.uid of another object',
    description:
      'The manifest carries the uid of an object that was deleted: the server answers 409 Conflict when no object has that name, and 422 Invalid (the uid is immutable) when it was created again.',
    docs: docsLinks.concurrency,
  },
  'field-immutable': {
    severity: 'error',
    title: 'The server will not let this field change',
    description:
      "The manifest changes a field the API server keeps as it was created (a workload's selector, a StatefulSet's claims and service name, a Job's pod template, a Service's cluster IP, a claim's or volume's spec, an immutable ConfigMap, a binding's roleRef, a StorageClass's parameters, ...): the update is refused with 422 Invalid. Delete and create the object again, or keep the live value.",
    docs: 'https://kubernetes.io/docs/reference/kubernetes-api/',
  },
  'would-delete': {
    severity: 'warning',
    title: 'The apply would delete a field',
    description:
      'The field manager set this field last time, the manifest no longer does and nobody else owns it: the apply removes it.',
    docs: docsLinks.fieldManagement,
  },
  'controlled-by': {
    severity: 'warning',
    title: 'Managed by a controller',
    description:
      'The live object has a controller owner reference: the controller will revert changes applied by hand.',
    docs: docsLinks.ownerReferences,
  },
  'kind-not-served': {
    severity: 'error',
    title: 'Kind not served',
    description:
      'The cluster does not serve this apiVersion and kind, so kubectl apply fails on the object ("no matches for kind"): a built-in kind at a version that was removed (the message names the versions served), or a custom resource whose CustomResourceDefinition is not installed.',
    docs: docsLinks.apiVersions,
    // What the server answers is said (no matches for kind), but nothing of the object's fields is.
    notJudged: true,
  },
  'kind-from-new-crd': {
    severity: 'information',
    title: 'Kind from a CustomResourceDefinition not installed yet',
    description:
      'The cluster does not serve the kind yet, but a CustomResourceDefinition among the files checked with it defines it: nothing can be predicted for the object, and the CRD has to be applied (and established) before it; kubectl apply of both in one pass fails on the object.',
    docs: docsLinks.customResources,
  },
  'namespace-not-found': {
    severity: 'error',
    title: 'Namespace not found',
    description:
      'The object goes to a namespace that does not exist in the cluster (a typo, an overlay\'s namespace before its Namespace is created): the server refuses the apply or create with 404 NotFound, namespaces "NAME" not found.',
    docs: docsLinks.namespaces,
  },
  'namespace-from-files': {
    severity: 'information',
    title: 'Namespace created by the files checked with it',
    description:
      "The object's namespace does not exist in the cluster yet, but a Namespace object among the files checked with it creates it: the Namespace has to be sent before the object, as kubectl sends objects in the order given and an object sent before its Namespace fails.",
    docs: docsLinks.namespaces,
    quiet: true,
  },
  forbidden: {
    severity: 'error',
    title: 'The user may not send the request',
    description:
      "The cluster's authorization (RBAC) refuses a request the apply sends as the current user — the PATCH of a server-side apply (and the create it makes of a missing object), a client-side apply's GET and PATCH or POST, a create's POST — in that namespace, for that kind, or for that object's name: the server answers 403 Forbidden before it looks at anything else of the object, and a dry run is refused the same way. Asked with SelfSubjectAccessReview, which changes nothing.",
    docs: docsLinks.authorization,
  },
  'permission-unknown': {
    severity: 'information',
    title: 'Whether the user may send the request is unknown',
    description:
      "The cluster did not answer whether the current user may send the apply's requests (its SelfSubjectAccessReview failed or was refused): the rest of the object is judged, and the apply may still be refused with 403 Forbidden.",
    docs: docsLinks.authorization,
    quiet: true,
  },
  'validation-rule-fails': {
    severity: 'error',
    title: 'A CRD validation rule fails',
    description:
      "A rule of the CustomResourceDefinition (x-kubernetes-validations, a CEL expression) is false for the object the request would store — the live object with the manifest merged in — or, for a transition rule, for that object against the live one (self == oldSelf: immutable once set): the server refuses it with 422 Invalid, in the rule's own message.",
    docs: docsLinks.validationRules,
  },
  'validation-rule-unknown': {
    severity: 'information',
    title: 'A CRD validation rule cannot be evaluated here',
    description:
      "A rule of the CustomResourceDefinition uses what the product's CEL library does not evaluate as Kubernetes does (an extension function such as quantity(), isSorted(), url() or ip(), a timestamp or duration field, a value large enough for the server's cost budget): whether the server accepts the object is unknown, and only a dry run tells.",
    docs: docsLinks.validationRules,
  },
  // The object the request would store (stored-object.ts, pod-security.ts).
  'invalid-merged-object': {
    severity: 'error',
    title: 'The object the apply would store is invalid',
    description:
      "The object the request would store — the live object with the manifest merged in, or the manifest itself for a new object — breaks a built-in validation that merges commonly break: an env var with both value and valueFrom (a history of kubectl set env), a selector that no longer matches the template's labels, two containers or two ports of a container with one name, a request above its limit. The server refuses it with 422 Invalid, in the words the finding quotes.",
    docs: docsLinks.storedObject,
  },
  'pod-security-forbidden': {
    severity: 'error',
    title: 'Pod Security admission refuses the Pod',
    description:
      'The namespace\'s pod-security.kubernetes.io/enforce label sets a Pod Security Standard (baseline or restricted) that the Pod breaks: the server refuses it with 403 Forbidden (violates PodSecurity "restricted:latest": ...), naming every check it fails.',
    docs: docsLinks.podSecurity,
  },
  'pod-security-warning': {
    severity: 'warning',
    title: 'Pod Security admission warns, or refuses the Pods of a workload',
    description:
      "A workload (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, ReplicationController) whose pod template breaks the namespace's enforced Pod Security Standard is accepted with a warning, and its controller's Pods are then refused; a Pod or workload that breaks the level of the pod-security.kubernetes.io/warn label is accepted with the server's warning (would violate PodSecurity ...).",
    docs: docsLinks.podSecurity,
  },
  // Admission of the request: webhooks, LimitRange and ResourceQuota (webhooks.ts, quota.ts, admission-judgement.ts).
  'admission-webhook': {
    severity: 'information',
    title: 'An admission webhook judges or changes the object',
    description:
      'A ValidatingWebhookConfiguration or MutatingWebhookConfiguration of the cluster has a webhook whose rules (operation, group, version, resource, scope, namespaceSelector, objectSelector) match the request the apply sends: the server calls it, and only a dry run can tell what it says. Its failurePolicy and sideEffects are named; a webhook with matchConditions, or a selector on labels that were not read, is one that may be called.',
    docs: docsLinks.admissionWebhooks,
  },
  'webhook-refuses-dry-run': {
    severity: 'warning',
    title: 'An admission webhook refuses every dry run of the object',
    description:
      'A webhook that matches the request declares sideEffects Some or Unknown: the server refuses every dry run it would be called for (admission webhook "x" does not support dry run), so kubectl apply --dry-run=server and the product\'s own confirmation cannot ask about this object.',
    docs: docsLinks.admissionWebhooks,
  },
  'limit-range-forbidden': {
    severity: 'error',
    title: 'A LimitRange refuses the Pod',
    description:
      "After the namespace's LimitRange defaults are filled in, a container's or the Pod's requests or limits break a LimitRange's min, max or maxLimitRequestRatio: the server refuses the Pod with 403 Forbidden (maximum cpu usage per Container is 500m, but limit is 1).",
    docs: docsLinks.quota,
  },
  'limit-range-pods-refused': {
    severity: 'warning',
    title: "A LimitRange refuses a workload's Pods",
    description:
      "The workload is accepted, but its pod template, with the namespace's LimitRange defaults filled in, breaks a LimitRange's min, max or maxLimitRequestRatio: every Pod its controller creates is refused (FailedCreate), in the words the finding quotes.",
    docs: docsLinks.quota,
  },
  'quota-exceeded': {
    severity: 'warning',
    title: "A ResourceQuota refuses the Pod, or a workload's Pods",
    description:
      "A ResourceQuota of the namespace refuses the Pods the request creates: their requests or limits times the replicas (a Deployment's rollout: maxSurge) go over status.hard minus status.used (exceeded quota: q, requested: ..., used: ..., limited: ...), or the quota covers cpu or memory and a container does not say its request or limit (must specify limits.cpu for: web). A warning: usage moves.",
    docs: docsLinks.quota,
  },
  // ValidatingAdmissionPolicies and their bindings (admission-policy.ts).
  'admission-policy-denies': {
    severity: 'error',
    title: 'A ValidatingAdmissionPolicy refuses the request',
    description:
      "A ValidatingAdmissionPolicy whose binding's validationActions hold Deny matches the object, and one of its validations is false on the object the request would store (or its params are missing and the binding says Deny): the server refuses it in the words the finding quotes (ValidatingAdmissionPolicy 'name' with binding 'name' denied request: ...).",
    docs: docsLinks.admissionPolicy,
  },
  'admission-policy-warns': {
    severity: 'warning',
    title: 'A ValidatingAdmissionPolicy warns',
    description:
      "A ValidatingAdmissionPolicy whose binding's validationActions hold Warn (and not Deny) matches the object and one of its validations is false: the server accepts the request and sends the warning the finding quotes (Validation failed for ValidatingAdmissionPolicy 'name' with binding 'name': ...).",
    docs: docsLinks.admissionPolicy,
  },
  'admission-policy-unknown': {
    severity: 'information',
    title: "A ValidatingAdmissionPolicy's answer is unknown",
    description:
      'A ValidatingAdmissionPolicy may judge the object, but the product cannot tell what it answers: an expression asks the authorizer or the user, uses a Kubernetes CEL library the product lacks, cannot be evaluated here; its params or the policies themselves could not be read. Only a dry run tells.',
    docs: docsLinks.admissionPolicy,
    quiet: true,
  },
  'render-failed': {
    severity: 'error',
    title: 'The source does not render',
    description:
      'kustomize build (or helm template) refused the kustomization or chart: what it would send cannot be checked, and applying it would fail the same way.',
    docs: 'https://kubectl.docs.kubernetes.io/references/kustomize/',
    withoutCluster: true,
    notJudged: true,
  },
  'release-ambiguous': {
    severity: 'warning',
    title: 'The chart is installed as several releases',
    description:
      "The cluster holds the chart's objects under more than one release (their meta.helm.sh/release-name and release-namespace annotations, and Helm's release records): the findings are for the one named in the message. In the editor, choose the release with Choose the Helm release… (remembered per chart); on the command line, name it with --release and -n.",
    docs: 'https://helm.sh/docs/helm/helm_list/',
  },
  'release-guessed': {
    severity: 'information',
    title: 'No release of the chart found in the cluster',
    description:
      'Nothing in the cluster names a release of this chart (no object Helm sent of the kinds it renders, no release record), so it is judged as a new release under the settings\' name and namespace: every object "does not exist yet". If the chart is installed, name its release and namespace (kubeConflictHints.helmRelease and namespace; --release and -n).',
    docs: 'https://helm.sh/docs/helm/helm_list/',
    quiet: true,
  },
  'tool-missing': {
    severity: 'warning',
    title: 'The tool that renders the source is missing',
    description:
      'helm (for a chart) or kustomize (for an overlay) was not found where the product looked (the setting naming it, else the PATH): the source is not rendered, so nothing it would send is judged. Install the tool, or name it with kubeConflictHints.helmPath / kustomizePath (the command line: --helm-binary, --kustomize-binary).',
    docs: 'https://helm.sh/docs/intro/install/',
    withoutCluster: true,
    notJudged: true,
  },
  'overlay-not-chosen': {
    severity: 'information',
    title: 'No chosen overlay uses the file',
    description:
      'The file is used only by Kustomize overlays that kubeConflictHints.kustomizeOverlays leaves out, so nothing it renders to is judged. Choose Kustomize overlays… to judge it again.',
    docs: 'https://kubectl.docs.kubernetes.io/references/kustomize/glossary/#overlay',
    withoutCluster: true,
    quiet: true,
    notJudged: true,
  },
  'invalid-manifest': {
    severity: 'error',
    title: 'The server refuses the manifest',
    description:
      'The manifest does not fit the schema the cluster serves, so the server refuses it before checking ownership.',
    docs: docsLinks.fieldManagement,
  },
  'yaml-syntax': {
    severity: 'error',
    title: 'YAML syntax error',
    description: 'The file does not parse as YAML.',
    docs: docsLinks.syntax,
    withoutCluster: true,
    notJudged: true,
  },
  'yaml-decode': {
    severity: 'error',
    title: 'YAML that kubectl refuses',
    description: 'The YAML parses, but kubectl would refuse to decode it.',
    docs: docsLinks.syntax,
    withoutCluster: true,
    notJudged: true,
  },
  'duplicate-key': {
    severity: 'warning',
    title: 'Duplicate key',
    description: 'A key is written twice in one map; kubectl silently keeps the last one.',
    docs: docsLinks.syntax,
    withoutCluster: true,
  },
  'too-large': {
    severity: 'warning',
    title: 'Too large to analyse',
    description:
      'The document is larger, nests deeper or expands through aliases further than the analysis takes on; nothing is said about it.',
    docs: docsLinks.syntax,
    withoutCluster: true,
    notJudged: true,
  },
  'generate-name-apply': {
    severity: 'error',
    title: 'generateName with kubectl apply',
    description:
      'kubectl apply (client- or server-side) refuses an object with generateName and no name before sending it: "cannot use generate name with apply".',
    docs: docsLinks.generateName,
    withoutCluster: true,
  },
  'secret-data-unverified': {
    severity: 'warning',
    title: 'Secret data owned by another manager',
    description:
      'Another field manager owns Secret data keys the manifest sets. Secret values are never read, so only a dry run can tell whether the values differ and the apply conflicts.',
    docs: docsLinks.ssaConflicts,
  },
  'secret-immutable-data-unverified': {
    severity: 'warning',
    title: 'Data of an immutable Secret',
    description:
      'The live Secret is immutable (immutable: true), so the server refuses any change to its data (422). Secret values are never read, so only a dry run can tell whether the data the manifest sets differs.',
    docs: 'https://kubernetes.io/docs/concepts/configuration/secret/#secret-immutable',
  },
  'conversion-unverified': {
    severity: 'warning',
    title: 'Manager recorded at another apiVersion',
    description:
      'A field manager wrote through another apiVersion, and the server compares its fields in that version through a conversion the product cannot run (a conversion webhook, fields that move between versions). Only a dry run can tell whether the apply conflicts.',
    docs: docsLinks.ssaConflicts,
  },
  // Not given by the analysis: the API server's own answer to a dry run where it parts from the
  // prediction (the editor's "Confirm with a dry-run apply", the command line's --verify).
  'dry-run-differs': {
    severity: 'error',
    title: 'The server answers differently',
    description:
      'With --verify: the dry run of the manifest got another answer from the API server than the prediction.',
    docs: docsLinks.ssaConflicts,
  },
} as const satisfies Record<string, FindingRule>;

export type FindingCode = keyof typeof findingCatalogue;

/** The codes in catalogue order. */
export const findingCodes = Object.keys(findingCatalogue) as FindingCode[];

/** The code shown for a dry-run answer the prediction did not foresee. */
export const dryRunDiffersCode = 'dry-run-differs' satisfies FindingCode;

export function ruleFor(code: FindingCode): FindingRule {
  return findingCatalogue[code];
}

/** Whether an editor shows this code as a hint (see FindingRule.quiet) when the user has not chosen its severity. */
export function shownAsHint(code: FindingCode, chosen: Readonly<Record<string, unknown>> | undefined): boolean {
  return (
    (findingCatalogue[code] as FindingRule).quiet === true && !Object.prototype.hasOwnProperty.call(chosen ?? {}, code)
  );
}

/** Whether a finding of this code means that (a part of) its file was not judged. */
export function meansNotJudged(code: FindingCode): boolean {
  return (findingCatalogue[code] as FindingRule).notJudged === true;
}

/** Whether a finding of this code rests on what the cluster said (and so may rest on old facts). */
export function restsOnCluster(code: FindingCode): boolean {
  return (findingCatalogue[code] as FindingRule).withoutCluster !== true;
}

/** The severity a code has unless the user chose another (kubeConflictHints.severity, ...). */
export function defaultSeverity(code: FindingCode): Severity {
  return findingCatalogue[code].severity;
}
