// Several contexts at once in the editor (`kubeConflictHints.contexts`): which contexts the setting
// selects (names, or globs over the kubeconfig's contexts, read again when the kubeconfig changes),
// and a document judged in each one — one session per context, each context's facts peeked on
// their own, each analysed by the one analysis path (document-analysis.ts) — made into the one
// analysis the handlers show: each object's findings merged across the contexts
// (core/findings/fleet.ts), a finding shared by several told once and naming them. A context that
// does not answer holds nobody back: its column is empty and says why. What differs between the
// clusters that hold an object (a field's live value or owners) is said on the field's line.
import { kubeconfigPaths, readKubeconfig, redactText, type ClusterHealthReport } from '../cluster';
import {
  contextsNamed,
  driftFindings,
  fieldStates,
  fleetCell,
  fleetEntryOf,
  fleetFindings,
  restsOnCluster,
  objectIdentity,
  unjudgedOn,
  type ContextFields,
  type Finding,
} from '../core/findings';
import type { Settings } from '../protocol';
import type { AnalyzedResource, DocumentAnalysis } from './document-analysis';
import { fingerprintOf } from './kubeconfig-watch';
import type { Session } from './session';
import { stalenessOf } from './stale';

/** One context's judgement of a document. */
export interface FleetColumn {
  readonly context: string;
  /** The document's settings with this context. */
  readonly settings: Settings;
  readonly session: Session | undefined;
  readonly analysis: DocumentAnalysis;
  /** Why this context judged nothing of the document (its cluster unreachable before it answered, …). */
  readonly trouble?: string;
  /** Judged on what its cluster said before it stopped answering: since when (`as of 12:03:10 — …`). */
  readonly stale?: string;
}

/** What `kubeConflictHints.contexts` selects in the kubeconfig: the contexts, and the entries that select none. */
export interface SelectedContexts {
  readonly contexts: readonly string[];
  readonly unmatched: readonly string[];
}

/** The contexts each setting selects, read once per kubeconfig as it is now (its files' fingerprint). */
export class FleetContexts {
  private readonly known = new Map<string, { fingerprint: string; selected: Promise<SelectedContexts | undefined> }>();

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** Undefined when the setting is empty or the kubeconfig cannot be read (one context, as ever, says why). */
  select(settings: Settings): Promise<SelectedContexts | undefined> {
    if (settings.contexts.length === 0) return Promise.resolve(undefined);
    const fingerprint = fingerprintOf(kubeconfigPaths(settings.kubeconfig || undefined, this.env));
    const key = JSON.stringify([settings.kubeconfig, settings.contexts]);
    const known = this.known.get(key);
    if (known && known.fingerprint === fingerprint) return known.selected;
    const selected = readKubeconfig({ kubeconfig: settings.kubeconfig }, this.env).then((read) =>
      read.ok
        ? contextsNamed(
            read.value.contexts.map((c) => c.name),
            settings.contexts,
          )
        : undefined,
    );
    if (this.known.size >= 16) this.known.clear();
    this.known.set(key, { fingerprint, selected });
    return selected;
  }
}

/** The health states in which a context's facts are not live: its column says so. */
const troubled: Partial<Record<ClusterHealthReport['state'], string>> = {
  unreachable: 'cluster unreachable',
  unauthenticated: 'credentials refused',
  forbidden: 'reads forbidden',
  failing: 'cluster failing',
};

/**
 * Why a context's judgement of the document is missing (`trouble`) or old (`stale`), from its
 * cluster's health and the facts it gave: a cluster that stopped answering after it had told every
 * object's facts leaves them judged, as of then, as one context's are.
 */
export function columnState(
  session: Session | undefined,
  analysis: DocumentAnalysis,
  settings: Settings,
): { trouble?: string; stale?: string } {
  if (!session) return {};
  const health = session.connection.health();
  const known = analysis.resources.every(
    ({ facts }) =>
      !facts || (facts.kind.state === 'served' && (facts.live.state === 'exists' || facts.live.state === 'absent')),
  );
  const stale = stalenessOf(health);
  if (known && stale) return { stale };
  const state = troubled[health.state];
  if (state) return { trouble: health.problem ? `${state} (${redactText(health.problem.message)})` : state };
  for (const { resource, facts } of analysis.resources) {
    if (facts && (facts.kind.state === 'unavailable' || facts.live.state === 'unavailable')) {
      const why = unjudgedOn(resource, facts, settings);
      if (why) return { trouble: why };
    }
  }
  return {};
}

/**
 * The analysis the handlers show: the text's problems once (the same in every context), and each
 * object's findings merged across the contexts, a shared one told once naming them. Each object's
 * facts are the first context's where it exists there (the hover and fixes that read one context
 * read the columns instead).
 */
export function fleetAnalysis(columns: readonly FleetColumn[]): DocumentAnalysis {
  const first = columns[0]!.analysis;
  const ofObjects = new Set<Finding>(first.resources.flatMap((r) => r.findings));
  const problems = first.findings.filter((f) => !ofObjects.has(f));
  const resources = first.resources.map((r, i): AnalyzedResource => {
    const findings = fleetFindings(
      columns.map((c) => ({
        context: c.context,
        findings: markedOld(c.analysis.resources[i]?.findings ?? [], c.stale),
      })),
    );
    const existing = columns.find((c) => c.analysis.resources[i]?.facts?.live.state === 'exists');
    // What differs between the clusters that hold the object, on its field's line (the command line's too).
    const drift = driftFindings(
      objectIdentity(r.resource),
      columns.flatMap((c): ContextFields[] => {
        const analyzed = c.analysis.resources[i];
        const facts = analyzed?.facts;
        if (c.trouble || !analyzed || !facts) return [];
        if (facts.live.state === 'absent') return [{ context: c.context, fields: 'missing' }];
        if (facts.live.state !== 'exists') return [];
        return [{ context: c.context, fields: fieldStates(analyzed.resource, facts.live.object, facts.schema) }];
      }),
    );
    return {
      resource: r.resource,
      facts: existing?.analysis.resources[i]?.facts ?? r.facts,
      findings: [...findings, ...drift],
    };
  });
  return { parsed: first.parsed, resources, findings: [...problems, ...resources.flatMap((r) => r.findings)] };
}

/** What rests on a context's old facts says since when they are old (a finding of the text alone does not). */
function markedOld(findings: readonly Finding[], stale: string | undefined): readonly Finding[] {
  return stale
    ? findings.map((f) => (restsOnCluster(f.code) ? { ...f, message: `${f.message} (${stale})` } : f))
    : findings;
}

/** The contexts judged on old facts, for the document's state: `staging as of 12:03:10 — cluster unreachable since …`. */
export function fleetStaleness(columns: readonly FleetColumn[]): string | undefined {
  const parts = columns.filter((c) => c.stale).map((c) => `${c.context} ${c.stale}`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** The document's state for the contexts that gave nothing: `Not judged in gone: cluster unreachable (…)`. */
export function fleetTrouble(columns: readonly FleetColumn[], unmatched: readonly string[]): string | undefined {
  const parts = columns.filter((c) => c.trouble).map((c) => `Not judged in ${c.context}: ${c.trouble}`);
  for (const entry of unmatched)
    parts.push(`kubeConflictHints.contexts: ${JSON.stringify(entry)} matches no context of the kubeconfig`);
  return parts.length > 0 ? `${parts.join('; ')}.` : undefined;
}

/** Each context's cell for the object at index `i` of a document judged in several contexts. */
export function fleetCells(columns: readonly FleetColumn[], i: number): { context: string; cell: string }[] {
  return columns.map((c) => ({
    context: c.context,
    cell: c.trouble
      ? 'not judged'
      : fleetCell(fleetEntryOf(c.analysis.resources[i]?.facts, c.analysis.resources[i]?.findings ?? [])),
  }));
}
