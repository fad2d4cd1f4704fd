// Per-document analysis for the editor: each text version is parsed once (documents reused by
// content), each resource analysed once per (its text, the facts, the settings). A keystroke in one
// document of a 500-document file re-parses and re-analyses that document only, and sends no
// request: facts are peeked from the session's caches.
import {
  analyzeResource,
  definedKinds,
  definedKindsKey,
  problemFindings,
  withDefinedKinds,
  type DefinedKind,
  type Finding,
  type ResourceFacts,
} from '../core/findings';
import {
  createManifestCache,
  namedObject,
  parseManifestText,
  parseManifestTextInSlices,
  shiftRange,
  type ManifestCache,
  type ManifestResource,
  type ParsedManifest,
} from '../core/manifest/manifest';
import { settledFacts } from '../cluster';
import type { ControllerApplier } from '../core/gitops/model';
import type { Settings } from '../protocol';
import type { Session } from './session';

export interface AnalyzedResource {
  readonly resource: ManifestResource;
  readonly facts: ResourceFacts | undefined;
  readonly findings: readonly Finding[];
}

export interface DocumentAnalysis {
  readonly parsed: ParsedManifest;
  readonly resources: readonly AnalyzedResource[];
  /**
   * Problems of the text plus every resource's findings, ranges absolute; a syntax problem left to
   * another language service of the editor is among them, as HeldBack.
   */
  readonly findings: readonly Finding[];
}

/**
 * A finding the editor is not shown, and why (`heldBack`: `shown by redhat.vscode-yaml`): a syntax
 * error another language service underlines, or one the user's syntaxErrors setting leaves out. What
 * it says still holds: a document that does not parse is not judged, whoever says so.
 */
export interface HeldBack extends Finding {
  readonly heldBack: string;
}

export function isHeldBack(f: Finding): f is HeldBack {
  return typeof (f as Partial<HeldBack>).heldBack === 'string';
}

interface CachedFindings {
  readonly settingsKey: string;
  readonly facts: ResourceFacts;
  /** The session's facts revision when they were peeked (FactsSource.revision). */
  readonly revision: number;
  /**
   * Whether `facts` were settled (settledFacts) when kept: facts are never changed once handed
   * out, so a keystroke asks it of each of the file's other objects without looking again.
   */
  readonly settled: boolean;
  readonly lineOffset: number;
  readonly findings: readonly Finding[];
}

export class DocumentAnalyzer {
  private readonly manifestCaches = new Map<string, ManifestCache>();
  private readonly parsedByUri = new Map<string, { version: number; parsed: ParsedManifest }>();
  private readonly findingsByUri = new Map<string, Map<string, CachedFindings>>();

  private readonly pending = new Map<string, { version: number; parsing: Promise<void> }>();
  /** The kinds the CRDs of each parsed document define: open documents are applied together. */
  private readonly definedByUri = new Map<string, { parsed: ParsedManifest; defined: readonly DefinedKind[] }>();
  private definedKey = '';
  private readonly definedListeners: (() => void)[] = [];
  /** The time `analyze` has taken so far, in ms (what a refresh costs: refresh.ts). */
  private spentMs = 0;

  /** The time the passes over the documents have taken so far, in ms. */
  workMs(): number {
    return this.spentMs;
  }

  /** Another document's CustomResourceDefinitions changed: every document's findings may change. */
  onDefinedKindsChange(listener: () => void): void {
    this.definedListeners.push(listener);
  }

  /** The kinds the CustomResourceDefinitions in the open documents define (as parsed so far). */
  private definedKinds(): DefinedKind[] {
    const out: DefinedKind[] = [];
    for (const [uri, { parsed }] of this.parsedByUri) {
      let known = this.definedByUri.get(uri);
      if (known?.parsed !== parsed) {
        known = { parsed, defined: definedKinds(parsed.resources, documentName(uri)) };
        this.definedByUri.set(uri, known);
      }
      out.push(...known.defined);
    }
    return out;
  }

  /** Tells the listeners when what the open documents define has changed since last said. */
  private definedMayHaveChanged(): void {
    const key = definedKindsKey(this.definedKinds());
    if (key === this.definedKey) return;
    this.definedKey = key;
    for (const listener of this.definedListeners) listener();
  }

  /**
   * Parses this version without blocking the event loop for long (a first look at a file of
   * thousands of documents takes seconds): hovers and other requests are answered meanwhile.
   * `analyze` afterwards finds the parse ready. `onFirstResource`: called once this version is
   * known to hold a Kubernetes object, while the rest of it is read.
   */
  prepare(
    uri: string,
    version: number,
    text: string,
    onFirstResource?: (first: ManifestResource) => void,
  ): Promise<void> {
    if (this.parsedByUri.get(uri)?.version === version) return Promise.resolve();
    const running = this.pending.get(uri);
    if (running?.version === version) return running.parsing;
    const cache = this.cacheFor(uri);
    const parsing = parseManifestTextInSlices(text, cache, onFirstResource ? { onFirstResource } : {}).then(
      (parsed) => {
        if (this.pending.get(uri)?.parsing === parsing) this.pending.delete(uri);
        const known = this.parsedByUri.get(uri);
        if (!known || known.version < version) {
          this.parsedByUri.set(uri, { version, parsed });
          this.definedMayHaveChanged();
        }
      },
    );
    this.pending.set(uri, { version, parsing });
    return parsing;
  }

  private cacheFor(uri: string): ManifestCache {
    let cache = this.manifestCaches.get(uri);
    if (!cache) {
      cache = createManifestCache();
      this.manifestCaches.set(uri, cache);
    }
    return cache;
  }

  /** The parse of this version of the document (parsed once per version). */
  parse(uri: string, version: number, text: string): ParsedManifest {
    const known = this.parsedByUri.get(uri);
    if (known && known.version === version) return known.parsed;
    const parsed = parseManifestText(text, this.cacheFor(uri));
    this.parsedByUri.set(uri, { version, parsed });
    this.definedMayHaveChanged();
    return parsed;
  }

  /**
   * `syntaxHeldBack`: why this document's syntax problems (and duplicate keys) are not shown here
   * (syntaxHeldBack below), or undefined when they are ours to show.
   */
  analyze(
    uri: string,
    version: number,
    text: string,
    documentSettings: Settings,
    session: Session | undefined,
    syntaxHeldBack?: string,
    /** With several contexts, which one: each keeps its own findings between passes. */
    column?: string,
    /** The GitOps controller that sends the document's objects (`kubeConflictHints.applier`), when one does. */
    controller?: ControllerApplier,
  ): DocumentAnalysis {
    const started = performance.now();
    try {
      return this.judge(uri, version, text, documentSettings, session, syntaxHeldBack, column, controller);
    } finally {
      this.spentMs += performance.now() - started;
    }
  }

  private judge(
    uri: string,
    version: number,
    text: string,
    documentSettings: Settings,
    session: Session | undefined,
    syntaxHeldBack: string | undefined,
    column: string | undefined,
    controller: ControllerApplier | undefined,
  ): DocumentAnalysis {
    const parsed = this.parse(uri, version, text);
    const cacheKey = column === undefined ? uri : `${uri}\u0000${column}`;
    const previous = this.findingsByUri.get(cacheKey) ?? new Map<string, CachedFindings>();
    const next = new Map<string, CachedFindings>();
    // The open documents are judged as applied together: a CRD in one makes its kind no error in another.
    const defined = this.definedKinds();
    // `helm` sends as Helm 4 does: a server-side apply as the field manager helm.
    const sender: Settings =
      documentSettings.applier === 'helm'
        ? { ...documentSettings, fieldManager: 'helm', applyMode: 'serverSide' }
        : documentSettings;
    const judged = withDefinedKinds<Settings & { readonly definedKinds?: readonly DefinedKind[] }>(sender, defined);
    const settings: typeof judged & { readonly controller?: ControllerApplier } = controller
      ? { ...judged, controller }
      : judged;
    const settingsKey = `${settings.fieldManager}\u0000${settings.applyMode}\u0000${session?.key ?? ''}\u0000${JSON.stringify(settings.severity)}\u0000${definedKindsKey(defined)}\u0000${controller ? JSON.stringify(controller) : ''}`;
    const resources: AnalyzedResource[] = [];
    // Read before any peek of this pass: what arrives meanwhile makes the next pass peek again.
    const revision = session?.facts.revision() ?? 0;
    // YAML that is not a Kubernetes manifest (a CI workflow, a compose file) is none of our
    // business: its syntax is the YAML extension's to report. A broken document in a file of
    // manifests is reported, since it was not checked.
    // Whatever is left out here, every document is analysed on its own: a broken document never
    // hides the findings of the others.
    const findings: Finding[] = looksLikeManifests(parsed, text)
      ? problemFindings(parsed.problems, settings.severity).map((f): Finding | HeldBack =>
          syntaxHeldBack !== undefined && syntaxProblemCodes.has(f.code) ? { ...f, heldBack: syntaxHeldBack } : f,
        )
      : [];

    for (const resource of parsed.resources) {
      // The document's text is the key (an item of a List adds its index): no copy of the text per resource and keystroke.
      // A JSON value after another on its line is placed by its column too: the column joins the key.
      const placed =
        resource.columnOffset === undefined
          ? resource.documentText
          : `${resource.columnOffset}\u0001${resource.documentText}`;
      const resourceKey = resource.itemIndex === undefined ? placed : `${resource.itemIndex}\u0000${placed}`;
      const cached = previous.get(resourceKey) ?? next.get(resourceKey);
      // A keystroke peeks the facts of the document typed in only: the others' settled facts are
      // what a peek would answer again while the revision stands still (cluster/facts.ts).
      const kept =
        session !== undefined &&
        cached !== undefined &&
        cached.settingsKey === settingsKey &&
        cached.revision === revision &&
        cached.settled;
      if (kept) {
        const resourceFindings = this.placed(cached, resource.lineOffset);
        next.set(
          resourceKey,
          cached.lineOffset === resource.lineOffset
            ? cached
            : { ...cached, lineOffset: resource.lineOffset, findings: resourceFindings },
        );
        resources.push({ resource, facts: cached.facts, findings: resourceFindings });
        findings.push(...resourceFindings);
        continue;
      }
      const named = namedObject(resource);
      if (!session || !named) {
        // Without a name there is nothing to look up, but the manifest alone can still be refused
        // (generateName with kubectl apply).
        const own = resource.name
          ? []
          : analyzeResource(
              resource,
              { kind: { state: 'pending' }, live: { state: 'pending' }, schema: undefined },
              settings,
            );
        resources.push({ resource, facts: undefined, findings: own });
        findings.push(...own);
        continue;
      }
      const facts = session.facts.peek(named);
      const resourceFindings =
        cached && cached.settingsKey === settingsKey && sameFacts(cached.facts, facts)
          ? this.placed(cached, resource.lineOffset)
          : analyzeResource(resource, facts, settings);
      next.set(resourceKey, {
        settingsKey,
        facts,
        revision,
        settled: settledFacts(facts),
        lineOffset: resource.lineOffset,
        findings: resourceFindings,
      });
      resources.push({ resource, facts, findings: resourceFindings });
      findings.push(...resourceFindings);
    }
    this.findingsByUri.set(cacheKey, next);
    return { parsed, resources, findings };
  }

  /** A cached resource's findings, moved to where its document now starts. */
  private placed(cached: CachedFindings, lineOffset: number): readonly Finding[] {
    return cached.lineOffset === lineOffset
      ? cached.findings
      : cached.findings.map((f) => shiftFinding(f, lineOffset - cached.lineOffset));
  }

  forget(uri: string): void {
    this.pending.delete(uri);
    this.manifestCaches.delete(uri);
    this.parsedByUri.delete(uri);
    for (const key of [...this.findingsByUri.keys()])
      if (key === uri || key.startsWith(`${uri}\u0000`)) this.findingsByUri.delete(key);
    this.definedByUri.delete(uri);
    this.definedMayHaveChanged();
  }
}

// Within one line: `\s*` after `^` also crosses line breaks, which made the search quadratic in
// the number of blank lines (40,000 of them blocked the server for seconds).
const MANIFEST_KEY = /(?:^[ \t]*(-[ \t]+)?|[{,][ \t]*)["']?(apiVersion|kind)["']?[ \t]*:/m;

/**
 * What another YAML language service (Red Hat's yaml-language-server, VS Code's JSON service)
 * reports on the same spot: a second squiggle would say nothing new. `yaml-decode` stays ours:
 * it is YAML that parses but that kubectl refuses, which only a Kubernetes tool knows.
 */
const syntaxProblemCodes: ReadonlySet<string> = new Set(['yaml-syntax', 'duplicate-key']);

/**
 * Whether this document's syntax problems are ours to report, and if not why: `always`/`never` as
 * the user says; `auto` (the default) only where the editor has no other language service for the
 * document's language that reports them (`otherServices`: language id → extension id). Undefined:
 * ours; else the words the document's state gives (`shown by redhat.vscode-yaml`).
 */
export function syntaxHeldBack(
  settings: Pick<Settings, 'syntaxErrors'>,
  languageId: string,
  otherServices: Readonly<Record<string, string>>,
): string | undefined {
  if (settings.syntaxErrors === 'always') return undefined;
  if (settings.syntaxErrors === 'never') return 'not shown: kubeConflictHints.syntaxErrors is "never"';
  return Object.hasOwn(otherServices, languageId) ? `shown by ${otherServices[languageId]}` : undefined;
}

/** How a message names a document: its file name (the CRD's name says the rest). */
function documentName(uri: string): string {
  const last =
    uri
      .replace(/[?#].*$/, '')
      .split('/')
      .pop() ?? uri;
  try {
    return decodeURIComponent(last) || uri;
  } catch {
    return last || uri;
  }
}

function looksLikeManifests(parsed: ParsedManifest, text: string): boolean {
  return parsed.resources.length > 0 || MANIFEST_KEY.test(text);
}

/** Facts are compared by identity of what the caches hand out: a changed object is a new object. */
function sameFacts(a: ResourceFacts, b: ResourceFacts): boolean {
  if (
    a.schema !== b.schema ||
    a.versions !== b.versions ||
    a.kind.state !== b.kind.state ||
    a.live.state !== b.live.state
  )
    return false;
  if (a.namespace?.state !== b.namespace?.state || a.namespace?.name !== b.namespace?.name) return false;
  // Who applies the object and the autoscalers beside it arrive after the object (gitops findings).
  if (a.autoscalers !== b.autoscalers) return false;
  // Admission: the policies, webhooks and rules the caches hand out, the same object until it changes.
  if (
    a.admissionPolicies !== b.admissionPolicies ||
    a.webhooks !== b.webhooks ||
    a.namespacePolicies !== b.namespacePolicies ||
    a.rules !== b.rules
  )
    return false;
  if (a.appliers !== b.appliers && JSON.stringify(a.appliers) !== JSON.stringify(b.appliers)) return false;
  if (permissionKey(a.permission) !== permissionKey(b.permission)) return false;
  if (a.live.state === 'exists' && b.live.state === 'exists') return a.live.object === b.live.object;
  return sameKind(a.kind, b.kind);
}

/** What the permission facts say, as one string: the reviews' answers are new records on every peek. */
function permissionKey(p: ResourceFacts['permission']): string {
  if (!p) return '';
  let key = `${p.user ?? ''}\u0000${p.namespace}`;
  for (const a of p.answers) key += `\u0000${a.verb}/${a.named ? 1 : 0}/${a.state}/${a.reason ?? ''}`;
  return key;
}

function sameKind(a: ResourceFacts['kind'], b: ResourceFacts['kind']): boolean {
  if (a === b) return true;
  // Served (nearly every object, on every keystroke): the fields it has. Anything else is rare.
  if (a.state === 'served' && b.state === 'served')
    return (
      a.group === b.group &&
      a.resource === b.resource &&
      a.namespaced === b.namespaced &&
      Object.keys(a).length === Object.keys(b).length
    );
  return JSON.stringify(a) === JSON.stringify(b);
}

function shiftFinding(f: Finding, lines: number): Finding {
  return { ...f, range: shiftRange(f.range, lines) };
}
