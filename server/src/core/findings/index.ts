// What the rest of the product uses of core/findings, its published entry points: code outside
// this folder imports from here and from nothing below it (test/unit/architecture.test.ts), so the
// rules, their helpers and the files they live in can change without touching an importer.

// The contracts: what the analysis is given, and the finding it returns.
export type {
  AdmissionPolicyFacts,
  AnalysisSettings,
  ApplierFacts,
  KindFacts,
  LiveFacts,
  NamespaceFacts,
  PermissionAnswer,
  PermissionFacts,
  PermissionVerb,
  PolicyParamsFacts,
  ResourceFacts,
} from './facts';
// Which requests an apply sends, for the cluster layer to ask about.
export { permissionQuestions, type PermissionRequest } from './permission';
export { objectIdentity, problemFindings, type Finding, type ObjectIdentity, type SeverityOverrides } from './finding';
// The rule catalogue: every code, its severity, title and link.
export {
  dryRunDiffersCode,
  findingCatalogue,
  findingCodes,
  meansNotJudged,
  restsOnCluster,
  ruleFor,
  severities,
  shownAsHint,
  type FindingCode,
  type Severity,
} from './catalogue';

// A GitOps controller's request: what keeps the live value in Flux's terms (the quick fix).
export { fluxKeepAnnotation, fluxMayKeepLive } from './gitops-takes';

// Judging one object, and the prediction the judgement is made of.
export { analyzeResource, unjudgedOn } from './analysis';
// Which kinds carry a pod spec (the cluster layer reads their namespace's labels for Pod Security).
export { podSpecPath } from './stored-object';
// What admission reads of the cluster: its webhooks, a namespace's LimitRanges and ResourceQuotas.
export type { AdmissionWebhook, WebhookFacts } from './webhooks';
export type { NamespacePolicyFacts } from './quota';
export { namedWebhook } from './admission-judgement';
export { predictionOf } from './prediction';
export {
  definedKinds,
  definedKindsKey,
  withDefinedKinds,
  type DefinedKind,
  type NotServedDiscovery,
} from './kind-served';

// Where a finding is shown, and how a value is written in a message.
export { locateOptions } from './locate';
export { showValue } from './show-value';

// Rendered sources: a chart's or an overlay's objects judged, and their findings moved onto the source lines.
export {
  helmApply,
  helmSends,
  overlayLabels,
  overlayLocalChange,
  removalFromSources,
  renderedLineHover,
  renderedObjectAnalysis,
  renderedObjectFindings,
  sentResource,
  type LocalChange,
  type RenderedApply,
  type SourceRemoval,
} from './rendered';
export { findingPath, relocateFindings, type RelocatedFinding } from './relocate';
export {
  renderFailureFindings,
  renderFailurePlaces,
  type FailurePlace,
  type RenderFailureSource,
} from './render-failure';
export {
  helmManagedByLabel,
  helmReleaseNameAnnotation,
  helmReleaseNamespaceAnnotation,
  releaseOriginFinding,
} from './helm-release';

// The server's own answer to a dry run, set beside the prediction.
export { compareWithServer, differenceFindings, type Verification, type VerificationDifference } from './verification';

// What the user reads besides findings: hovers, ownership, the force preview, who applies the object.
export { appliedBy, appliedByLens, appliedByLines, applierFacts, type AppliedBy } from './applied-by';
export { fieldHover, objectHover } from './hover-text';
export { managerNames } from './managers';
export { nodeAt } from './ownership';
export { ownershipHints, renderedOwnershipHints, type LineSpan, type OwnershipHint } from './ownership-hints';
export { ownershipLegend, ownershipView } from './ownership-view';
export {
  forceLine,
  forcePreview,
  lossOf,
  renderForcePreview,
  type AutoscalerFacts,
  type ForcePreview,
  type KubectlInvocation,
} from './force-preview';

// Several contexts side by side: one finding told once for the contexts that share it, a table cell per context.
export {
  contextsLabel,
  contextsNamed,
  driftFindings,
  fieldStates,
  fleetCell,
  fleetEntryOf,
  fleetFieldHover,
  fleetObjectHover,
  fleetFindings,
  mergeAcrossContexts,
  type ContextFields,
  type ContextFindings,
  type ContextTrouble,
  type FieldState,
  type FleetEntry,
  type FleetFinding,
  type FleetHoverColumn,
  type SharedFinding,
} from './fleet';
