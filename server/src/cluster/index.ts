// The cluster layer's public surface. Everything exported is plain data or a connection whose
// methods return plain data; no @kubernetes/client-node type leaves this folder.
export { createClusterConnection, KubeconfigOnce, readKubeconfig } from './connection';
export type { ClusterConnection, ClusterConnectionOptions, DryRunRequestOptions } from './connection';
export type { DryRunManifest } from './verifier';
export { notServedKindFacts, splitApiVersion } from './discovery';
export { openApiPathKey } from './openapi';
export { createClusterShare } from './share';
export type { ClusterShare } from './share';
export type * from './types';
export { createFactsSource, liveFacts, settledFacts } from './facts';
export type { FactsSource, LoadedFacts } from './facts';
export { dryRunManifestOf, sendDryRun, sentManifest, verifyResource } from './dry-run';
export type { VerifyAnswer } from './dry-run';
export { redactText, withoutUserinfo } from './redact';
export { kubeconfigPaths } from './kubeconfig';
export { autoscalersFor, autoscalersSignature, readAutoscalers } from './autoscalers';
