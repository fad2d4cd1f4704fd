// The check itself: every file, every object in it, the facts from the cluster or a snapshot,
// the same analysis the editor runs, and (with --verify) the server's dry-run answer beside it.
import * as path from 'node:path';
import {
  analyzeResource,
  appliedBy,
  definedKinds,
  fieldStates,
  forcePreview,
  objectIdentity,
  overlayLabels,
  predictionOf,
  problemFindings,
  unjudgedOn,
  withDefinedKinds,
  type AnalysisSettings,
  type AutoscalerFacts,
  type DefinedKind,
  type Finding,
  type ForcePreview,
  type KubectlInvocation,
  type ResourceFacts,
} from '../core/findings';
import { controllerManagers, controllerMode } from '../core/gitops/controller-request';
import type { ControllerApplier } from '../core/gitops/model';
import { parseManifestText, type ManifestResource, type ParsedManifest } from '../core/manifest/manifest';
import { kustomizationLabel } from '../core/sources/kustomize-map';
import type { RenderTarget } from '../core/sources/source-map';
import type { FileKind } from '../core/sources/file-kinds';
import { renderOverlay, topChart, type OverlayRender } from '../render/targets';
import { describeRenderProblem, type RenderResult, type RenderSettings } from '../render/renderer';
import { liveOf, withAppliers, withReason, type CheckedObject, type CheckReport } from './report';
import { verifyResource, type ClusterConnection, type ClusterProblem, type VerifyAnswer } from '../cluster';
import { ObjectReads, objectTitle, type FactsReader } from './facts';
import { classifyInputs, findKustomizations, kustomizeTargets, notCheckedNote } from './classify';
import { displayPath, readTextFile, stdinTarget, type FileText } from './files';
import type { CheckProgress } from './progress';
import { checkHelmCharts, type HelmCheckRequest } from './check-helm';
import { judgeRenderedObject, renderFailureEntries } from './rendered-objects';
import { isDirectory, toSlashes } from '../render/paths';

export type CheckOutcome =
  { ok: true; report: CheckReport } | { ok: false; problem: ClusterProblem } | { ok: false; usage: string };

export async function runCheck(
  files: readonly string[],
  reader: FactsReader,
  settings: AnalysisSettings,
  verifier: ClusterConnection | undefined,
  /** What the standard input held, when `-` is one of the files. */
  stdin?: FileText,
  onProgress?: (progress: CheckProgress) => void,
  /**
   * Kustomizations to build (`-k`), which tools render, the charts to render (`--helm`), and where
   * to look for the overlays that use a named file (none when undefined).
   */
  rendering: {
    kustomizations: readonly string[];
    settings: RenderSettings;
    helm?: Omit<HelmCheckRequest, 'settings'>;
    searchRoot?: string;
  } = { kustomizations: [], settings: {} },
  /** The cluster flags the check was run with: the force preview's kubectl command repeats them. */
  kubectl: Omit<KubectlInvocation, 'file'> = {},
  /**
   * `fieldStates`: keep each plain object's fields as the cluster holds them, to compare contexts.
   * `shared`: what the checks of several contexts of one run do once between them (CheckShare).
   * `applierOf`: the GitOps controller that sends a file's objects (`--applier`; for `auto`,
   * detected per file); none: `settings` alone say how they are sent.
   */
  options: {
    fieldStates?: boolean;
    shared?: CheckShare;
    applierOf?: (file: string, text: string) => Promise<ControllerApplier | undefined>;
  } = {},
): Promise<CheckOutcome> {
  const parse = (file: string, text: string) => options.shared?.parse(file, text) ?? parseManifestText(text);
  const render = (target: RenderTarget) =>
    options.shared?.renderOverlay(target, rendering.settings) ?? renderOverlay(target, rendering.settings);
  const classify = (named: ReadonlyMap<string, string>, around: ReadonlyMap<string, string> = new Map()) =>
    options.shared?.classify(named, around) ?? classifyInputs(named, around);
  const objects: CheckedObject[] = [];
  const texts = new Map<string, string>();
  for (const file of files) {
    const read =
      file === stdinTarget ? (stdin ?? { ok: false, message: 'the standard input was not read' }) : readTextFile(file);
    if (!read.ok) return { ok: false, usage: read.message };
    texts.set(file, read.text);
  }
  // Every file could be read: the cluster may be asked now, and answers while they are parsed.
  reader.prepare?.();
  // Only plain manifests are checked from their own text: a chart's template is not YAML, a patch is
  // a fragment, a kustomization is a recipe. Those are said to be skipped; other YAML is not Kubernetes.
  if (rendering.searchRoot !== undefined && !isDirectory(rendering.searchRoot))
    return { ok: false, usage: `--search-root ${rendering.searchRoot}: not a folder` };
  let kinds = classify(texts);
  // A base or a patch named alone is judged through the overlays that use it, which may live in
  // sibling folders nobody named: look for them under the search root (bounded), only when a named
  // file belongs to a kustomization at all.
  let around = new Map<string, string>();
  if (
    rendering.searchRoot !== undefined &&
    [...kinds.values()].some((k) => k.kind === 'kustomization' || k.kind === 'kustomization-input')
  ) {
    around = findKustomizations(rendering.searchRoot);
    kinds = classify(texts, around);
  }
  // Kustomizations and the files they use are checked through the overlays that use them: each
  // overlay built once, its findings kept where they land on a named file. `-k DIR` keeps them all.
  const targets = new Map<string, { wanted: Set<string> | 'all' }>();
  const throughOverlays = new Set<string>();
  for (const [file, roots] of kustomizeTargets(texts, kinds, around)) {
    // A component no kustomization here uses has no overlay to be judged in: it stays unchecked.
    if (roots.length > 0) throughOverlays.add(file);
    for (const root of roots) {
      const t = targets.get(root) ?? { wanted: new Set<string>() };
      if (t.wanted !== 'all') t.wanted.add(toSlashes(path.resolve(file)));
      targets.set(root, t);
    }
  }
  for (const dir of rendering.kustomizations) {
    if (!isDirectory(dir)) return { ok: false, usage: `-k ${dir}: not a folder holding a kustomization` };
    targets.set(toSlashes(path.resolve(dir)), { wanted: 'all' });
  }
  // The files checked together are applied together: a CustomResourceDefinition among them makes
  // its kind no error even though the cluster does not serve it yet (core/findings/kind-served.ts).
  // Plain manifests are parsed once, here, and overlays rendered before any object is judged.
  const plain = new Map<string, ReturnType<typeof parseManifestText>>();
  for (const [file, text] of texts) {
    if (kinds.get(file)!.kind === 'manifest' && !throughOverlays.has(file)) plain.set(file, parse(file, text));
  }
  const defined: DefinedKind[] = [...plain].flatMap(([file, parsed]) =>
    definedKinds(parsed.resources, displayPath(file)),
  );
  const labels = labelsFor([...targets.keys()]);
  const renders: {
    root: string;
    wanted: Set<string> | 'all';
    target: RenderTarget;
    result: Extract<RenderResult, { ok: true }>;
    resources: readonly ManifestResource[];
  }[] = [];
  for (const [root, { wanted }] of targets) {
    const target: RenderTarget = { kind: 'kustomize', root, label: labels.get(root)! };
    const out = await render(target);
    if (!out.ok) {
      // Without the tool nothing renders: one line, exit 2. One overlay the tool refuses is that
      // overlay's error; the other overlays are still checked.
      if (out.problem?.kind === 'not-installed')
        return { ok: false, usage: describeRenderProblem(target, out.problem) };
      const title = `${target.label} (${displayPath(root)})`;
      if (out.problem)
        objects.push(
          ...renderFailureEntries(out.source, title, describeRenderProblem(target, out.problem), out.problem.message),
        );
      else
        objects.push(
          ...renderFailureEntries(
            out.source,
            title,
            `cannot check ${target.label}: ${out.unreadable}`,
            `cannot check ${target.label}: ${out.unreadable}`,
          ),
        );
      continue;
    }
    renders.push({ root, wanted, target, result: out.result, resources: out.resources });
    defined.push(...definedKinds(out.resources, target.label));
  }
  const together = withDefinedKinds(settings, defined);
  // One object the cluster refuses to let be read is that object's not judged; the others go on.
  const reads = new ObjectReads(reader);
  // Every object of the files and overlays named at once: a kind with a few objects here is read by
  // name, one with many by a list (charts are rendered below, and read as they come).
  await reads.expect([...[...plain.values()].flatMap((p) => p.resources), ...renders.flatMap((r) => r.resources)]);
  for (const { root, wanted, target, result, resources } of renders) {
    // The controller whose source path builds this overlay (auto): it sends what the overlay renders.
    const controller = await options.applierOf?.(path.join(root, 'kustomization.yaml'), '');
    const overlaySettings: AnalysisSettings = controller ? { ...together, controller } : together;
    for (const resource of resources) {
      const judged = await judgeRenderedObject(reads, {
        resource,
        apply: { settings: overlaySettings },
        sourceMap: result.sourceMap,
        label: target.label,
        rendered: { target: target.label, root: displayPath(root), index: resource.documentIndex },
        ...(wanted !== 'all' ? { wanted } : {}),
        verifier: controller ? undefined : verifier,
      });
      if (!judged.ok) return judged;
      objects.push(...judged.entries);
    }
    for (const note of result.notes)
      objects.push({
        file: displayPath(root),
        title: `${target.label} (${displayPath(root)})`,
        findings: [],
        notes: [note],
      });
  }
  // Charts named with --helm: rendered once each; their files among the named ones are covered by it.
  // A chart whose files are named without --helm is rendered as `helm install` would with no
  // options (release: the chart's name; the check's namespace; the chart's values.yaml); without
  // helm each is a tool-missing warning on its Chart.yaml, not judged, and the rest is still checked
  // (docs/cli-input.md).
  const charts: string[] = [];
  const checkCharts = async (request: HelmCheckRequest) => {
    const helm = await checkHelmCharts(request, reads, settings.severity, verifier, defined);
    if (helm.ok) {
      objects.push(...helm.objects);
      charts.push(...helm.charts.map(toSlashes));
    }
    return helm;
  };
  let helmApply: Pick<AnalysisSettings, 'fieldManager' | 'applyMode'> | undefined;
  if (rendering.helm && rendering.helm.charts.length > 0) {
    const helm = await checkCharts({ ...rendering.helm, settings: rendering.settings });
    if (!helm.ok) return helm;
    helmApply = helm.apply;
  }
  const unnamed = [
    ...new Set([...kinds.values()].flatMap((k) => (k.kind === 'helm-chart' ? [toSlashes(topChart(k.chart))] : []))),
  ].filter((c) => !charts.includes(c));
  if (rendering.helm && unnamed.length > 0) {
    const helm = await checkCharts({
      charts: unnamed,
      valuesFiles: [],
      namespace: rendering.helm.namespace,
      ...(rendering.helm.named?.namespace !== undefined
        ? { named: { namespace: rendering.helm.named.namespace } }
        : {}),
      settings: rendering.settings,
      withoutHelm: 'finding',
    });
    if (!helm.ok) return helm;
  }
  // Every plain object's facts asked for at once: the kinds' lists and schemas are then read side by
  // side, not one kind's round trips after another's. They are judged in order as they arrive.
  const ahead = new Map<ManifestResource, ReturnType<ObjectReads['read']>>();
  for (const parsed of plain.values())
    for (const resource of parsed.resources) {
      const answer = reads.read(resource);
      // A check that stops at one object's problem leaves the others unread, not unhandled.
      answer.catch(() => undefined);
      ahead.set(resource, answer);
    }
  let fileNumber = 0;
  // Counted as they come: a count over every entry on each tick made a check quadratic in its objects.
  let checkedObjects = objects.filter((o) => o.object).length;
  for (const [file, text] of texts) {
    fileNumber++;
    const shown = displayPath(file);
    const kind = kinds.get(file)!;
    if (throughOverlays.has(file)) continue;
    if (kind.kind === 'helm-chart' && charts.includes(toSlashes(topChart(kind.chart)))) continue;
    if (kind.kind !== 'manifest') {
      const note = notCheckedNote(kind, (p) => displayPath(p));
      // A rendered source no overlay or chart here renders: nothing of it is judged.
      if (note) objects.push({ file: shown, title: shown, findings: [], notes: [note], notJudged: note });
      continue;
    }
    const parsed = plain.get(file) ?? parse(file, text);
    // Who sends this file's objects: the controller forces its apply (core/findings/gitops-takes.ts).
    const controller = parsed.resources.length > 0 ? await options.applierOf?.(file, text) : undefined;
    const fileSettings: AnalysisSettings = controller ? { ...together, controller } : together;
    const applierNote = controller ? [`checked as the request of ${controller.because}`] : [];
    if (parsed.problems.length > 0)
      objects.push({ file: shown, title: shown, findings: problemFindings(parsed.problems), notes: [] });
    for (const resource of parsed.resources) {
      const answer = await (ahead.get(resource) ?? reads.read(resource));
      if (!answer.ok) {
        if (!('refused' in answer)) return { ok: false, problem: answer.problem };
        objects.push({
          file: shown,
          object: objectIdentity(resource),
          title: objectTitle(resource, undefined, ''),
          findings: [],
          notes: [],
          notJudged: answer.refused,
        });
        continue;
      }
      const facts = controller ? await withAutoscalers(resource, answer.facts, reader) : answer.facts;
      const findings = analyzeResource(resource, facts, fileSettings);
      const preview = await forcePreviewOf(resource, facts, findings, fileSettings, reader, {
        file: file === stdinTarget ? '-' : shown,
        ...kubectl,
      });
      const checked: CheckedObject = {
        file: shown,
        object: objectIdentity(resource),
        title: answer.title,
        findings,
        notes: [...applierNote, ...answer.notes],
        ...liveOf(answer.facts),
        ...(options.fieldStates ? fieldsOf(resource, answer.facts) : {}),
        ...withReason(unjudgedOn(resource, answer.facts, together)),
        ...(preview ? { forcePreview: preview } : {}),
        ...withAppliers(appliedBy(answer.facts)),
      };
      // A dry run is your own apply: a controller's forced request is not what it would confirm.
      const verified: VerifyAnswer =
        verifier && !controller
          ? await verifyResource(verifier, resource, findings, answer.facts, settings)
          : { ok: true };
      if (!verified.ok) return { ok: false, problem: verified.problem };
      objects.push(verified.verification ? { ...checked, verification: verified.verification } : checked);
      checkedObjects++;
      onProgress?.({ file: fileNumber, files: texts.size, objects: checkedObjects });
    }
  }
  // A credential that may read nothing is the check's problem, not each object's: one line, exit 2.
  const refused = reads.allRefused;
  if (refused) return { ok: false, problem: refused };
  return {
    ok: true,
    report: {
      // A check of charts alone is a check of what Helm sends, and the summary says so.
      // A check of a named GitOps controller's request says that controller's manager and mode.
      mode:
        helmApply && files.length === 0 && rendering.kustomizations.length === 0
          ? helmApply.applyMode
          : settings.controller
            ? controllerMode(settings.controller.name)
            : settings.applyMode,
      fieldManager:
        helmApply && files.length === 0 && rendering.kustomizations.length === 0
          ? helmApply.fieldManager
          : settings.controller
            ? controllerManagers[settings.controller.name]
            : settings.fieldManager,
      source: reader.source,
      files: [
        ...files.map((f) => displayPath(f)),
        ...rendering.kustomizations.map((d) => displayPath(d)),
        ...(rendering.helm?.charts ?? []).map((d) => displayPath(d)),
      ],
      objects,
    },
  };
}

/**
 * What the checks of one run's contexts share (cli/main.ts checkFleet): the same files judged
 * against several clusters are parsed once — the same objects, whose node trees, built on first
 * use, are then built once — each overlay is built once, and the named files are classified once
 * (the folders above them looked at once for a chart or kustomization). None depends on a cluster:
 * the facts, and what is judged from them, stay each context's own.
 */
export interface CheckShare {
  parse(file: string, text: string): ParsedManifest;
  renderOverlay(target: RenderTarget, settings: RenderSettings): Promise<OverlayRender>;
  /** classifyInputs of the same files with the same texts (and kustomizations around them): once. */
  classify(named: ReadonlyMap<string, string>, around: ReadonlyMap<string, string>): ReadonlyMap<string, FileKind>;
}

export function createCheckShare(): CheckShare {
  const parsed = new Map<string, { text: string; parsed: ParsedManifest }>();
  const overlays = new Map<string, Promise<OverlayRender>>();
  const classified: { named: Map<string, string>; around: Map<string, string>; kinds: Map<string, FileKind> }[] = [];
  const same = (a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>) =>
    a.size === b.size && [...a].every(([file, text]) => b.get(file) === text);
  return {
    classify(named, around) {
      const known = classified.find((c) => same(c.named, named) && same(c.around, around));
      if (known) return known.kinds;
      const kinds = classifyInputs(named, around);
      classified.push({ named: new Map(named), around: new Map(around), kinds });
      return kinds;
    },
    parse(file, text) {
      const known = parsed.get(file);
      if (known?.text === text) return known.parsed;
      const fresh = parseManifestText(text);
      parsed.set(file, { text, parsed: fresh });
      return fresh;
    },
    renderOverlay(target, settings) {
      // The same overlay built by the same tools: every context's checks are given the same settings.
      const key = JSON.stringify([target, settings]);
      let render = overlays.get(key);
      if (!render) overlays.set(key, (render = renderOverlay(target, settings)));
      return render;
    },
  };
}

/**
 * The force preview of an object with a field conflict (the same judgement as the editor's
 * "Preview forcing…"): its autoscalers are read only then.
 */
async function forcePreviewOf(
  resource: ManifestResource,
  facts: ResourceFacts,
  findings: readonly Finding[],
  settings: AnalysisSettings,
  reader: FactsReader,
  invocation: KubectlInvocation,
): Promise<ForcePreview | undefined> {
  if (!findings.some((f) => f.code === 'field-conflict') || facts.live.state !== 'exists') return undefined;
  // Asked before the autoscalers' read: the prediction the findings were just made of is the one kept.
  const prediction = predictionOf(resource, facts, settings);
  const autoscalers: AutoscalerFacts = reader.autoscalers
    ? await reader.autoscalers(resource)
    : { state: 'unknown', reason: 'a snapshot holds no HorizontalPodAutoscalers' };
  return forcePreview({
    object: objectIdentity(resource),
    prediction,
    live: facts.live.object,
    fieldManager: settings.fieldManager,
    autoscalers,
    invocation,
  });
}

/**
 * The autoscalers of an object a GitOps controller sends whose kind scales, when the facts lack them
 * (the live object carries no controller's mark): whether the controller's replicas start a fight.
 */
async function withAutoscalers(
  resource: ManifestResource,
  facts: ResourceFacts,
  reader: FactsReader,
): Promise<ResourceFacts> {
  if (facts.autoscalers || facts.live.state !== 'exists' || !reader.autoscalers) return facts;
  if (!['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController'].includes(resource.kind)) return facts;
  return { ...facts, autoscalers: await reader.autoscalers(resource) };
}

/** The fields the manifest sets as the cluster holds them, for the comparison of contexts. */
function fieldsOf(resource: ManifestResource, facts: ResourceFacts): Pick<CheckedObject, 'fields'> {
  if (facts.live.state === 'absent') return { fields: 'missing' };
  if (facts.live.state !== 'exists') return {};
  return { fields: fieldStates(resource, facts.live.object, facts.schema) };
}

/** `overlay production`; the folder as shown when two targets share a name. */
function labelsFor(roots: readonly string[]): Map<string, string> {
  return overlayLabels(roots, kustomizationLabel, displayPath);
}
