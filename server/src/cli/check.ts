// The check itself: every file, every object in it, the facts from the cluster or a snapshot,
// the same analysis the editor runs, and (with --verify) the server's dry-run answer beside it.
import { analyzeResource, objectIdentity, problemFindings, type AnalysisSettings } from '../core/findings/analysis';
import { parseManifestText } from '../core/manifest/manifest';
import type { CheckedObject, CheckReport } from './report';
import type { ClusterConnection, ClusterProblem } from '../cluster';
import type { FactsReader } from './facts';
import { classifyInputs, notCheckedNote } from './classify';
import { displayPath, readTextFile, stdinTarget, type FileText } from './files';
import type { CheckProgress } from './progress';
import { compareWithServer } from './verify';

export type CheckOutcome = { ok: true; report: CheckReport } | { ok: false; problem: ClusterProblem } | { ok: false; usage: string };

export async function runCheck(
  files: readonly string[],
  reader: FactsReader,
  settings: AnalysisSettings,
  verifier: ClusterConnection | undefined,
  /** What the standard input held, when `-` is one of the files. */
  stdin?: FileText,
  onProgress?: (progress: CheckProgress) => void,
): Promise<CheckOutcome> {
  const objects: CheckedObject[] = [];
  const texts = new Map<string, string>();
  for (const file of files) {
    const read = file === stdinTarget ? (stdin ?? { ok: false, message: 'the standard input was not read' }) : readTextFile(file);
    if (!read.ok) return { ok: false, usage: read.message };
    texts.set(file, read.text);
  }
  // Only plain manifests are checked from their own text: a chart's template is not YAML, a patch is
  // a fragment, a kustomization is a recipe. Those are said to be skipped; other YAML is not Kubernetes.
  const kinds = classifyInputs(texts);
  let fileNumber = 0;
  for (const [file, text] of texts) {
    fileNumber++;
    const shown = displayPath(file);
    const kind = kinds.get(file)!;
    if (kind.kind !== 'manifest') {
      const note = notCheckedNote(kind, (p) => displayPath(p));
      if (note) objects.push({ file: shown, title: shown, findings: [], notes: [note] });
      continue;
    }
    const parsed = parseManifestText(text);
    if (parsed.problems.length > 0) objects.push({ file: shown, title: shown, findings: problemFindings(parsed.problems), notes: [] });
    for (const resource of parsed.resources) {
      const answer = await reader.read(resource);
      if (!answer.ok) return { ok: false, problem: answer.problem };
      const findings = analyzeResource(resource, answer.facts, settings);
      const checked: CheckedObject = { file: shown, object: objectIdentity(resource), title: answer.title, findings, notes: answer.notes };
      if (verifier && answer.facts.kind.state === 'served' && resource.name !== undefined) {
        // The text goes as written (duplicates, scalars) when the document is the object itself.
        const manifest = resource.itemIndex === undefined ? { object: resource.object, text: resource.documentText } : { object: resource.object };
        const options = { fieldManager: settings.fieldManager, fieldValidation: 'Strict' as const };
        const outcome = settings.applyMode === 'create' ? await verifier.dryRunCreate(manifest, options) : await verifier.dryRunApply(manifest, options);
        const compared = compareWithServer(resource, findings, outcome, answer.facts.schema);
        if (!compared.ok) return { ok: false, problem: compared.problem };
        objects.push({ ...checked, verification: compared.verification });
      } else {
        objects.push(checked);
      }
      onProgress?.({ file: fileNumber, files: texts.size, objects: objects.filter((o) => o.object).length });
    }
  }
  return {
    ok: true,
    report: { mode: settings.applyMode, fieldManager: settings.fieldManager, source: reader.source, files: files.map((f) => displayPath(f)), objects },
  };
}
