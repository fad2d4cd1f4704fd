// Where a render that failed belongs in the user's files. The failure is always said on the file that
// makes the source (a chart's Chart.yaml, an overlay's kustomization); and where the tool's own words
// name a place, there too: `parse error at (shop/templates/deployment.yaml:79)`, `template:
// shop/templates/deployment.yaml:9:22: executing ...`, `cannot load values.yaml: ... yaml: line 163`,
// `failed to parse bad.yaml: ... line 1`, kustomize's `invalid Kustomization: yaml: line 1` and
// `accumulating resources from 'missing.yaml'`. The words are Helm 3's and 4's and kustomize 5's, as
// they print them (test/unit/core/findings/render-failure.test.ts holds captured messages). Pure: the caller says
// where the chart or overlay is and brings the kustomization's text.
import type { Range } from '../manifest/manifest';
import { findingCatalogue, type FindingCode } from './catalogue';
import type { Finding } from './finding';

/** A place in a file (an absolute `/` path) where a failure is shown. */
export interface FailurePlace {
  readonly file: string;
  readonly range: Range;
}

export type RenderFailureSource =
  | {
      readonly tool: 'helm';
      /** The chart's folder (absolute, `/`). */
      readonly chart: string;
      /** The values files given with -f (absolute, `/`), in order. */
      readonly valuesFiles: readonly string[];
    }
  | {
      readonly tool: 'kustomize';
      /** The overlay's kustomization file (absolute, `/`), and its text when it could be read. */
      readonly kustomization: string;
      readonly kustomizationText?: string;
    };

/** Every place the failure is shown: the source's own file first, then what the tool's words name. */
export function renderFailurePlaces(source: RenderFailureSource, message: string): FailurePlace[] {
  const own = source.tool === 'helm' ? `${source.chart}/Chart.yaml` : source.kustomization;
  const places: FailurePlace[] = [at(own, 0, 0)];
  const named = source.tool === 'helm' ? helmPlace(source, message) : kustomizePlace(source, message);
  if (named && !(named.file === own && named.range.start.line === 0)) places.push(named);
  return places;
}

/** The findings of a failed render: one per place, in the tool's words. */
export function renderFailureFindings(
  code: Extract<FindingCode, 'render-failed' | 'tool-missing'>,
  places: readonly FailurePlace[],
  message: string,
): (Finding & { readonly file: string })[] {
  return places.map((p) => ({
    code,
    severity: findingCatalogue[code].severity,
    message,
    range: p.range,
    file: p.file,
  }));
}

function helmPlace(source: Extract<RenderFailureSource, { tool: 'helm' }>, message: string): FailurePlace | undefined {
  // A template: `parse error at (NAME/templates/x.yaml:79)`, `NAME/templates/x.yaml:9:22`, `template: NAME/...:9:22:`.
  // NAME is the chart's name (Chart.yaml), not its folder's; the rest is the path inside the chart.
  const template = /(?:^|[\s(])[^\s/():]+\/((?:charts\/[^\s/:()]+\/)*templates\/[^\s:()]+):(\d+)(?::(\d+))?/m.exec(
    message,
  );
  if (template && !template[1]!.split('/').includes('..'))
    return at(`${source.chart}/${template[1]}`, Number(template[2]) - 1, template[3] ? Number(template[3]) - 1 : 0);
  const line = yamlLine(message);
  // The chart's own values.yaml.
  if (/cannot load values\.yaml\b/.test(message)) return at(`${source.chart}/values.yaml`, line, 0);
  // A values file given with -f, as helm names it.
  const given = /failed to parse ([^:]+):/.exec(message)?.[1];
  if (given) {
    const file = source.valuesFiles.find((f) => f === given || f.endsWith(`/${given.replace(/^\.\//, '')}`));
    if (file) return at(file, line, 0);
  }
  return undefined;
}

function kustomizePlace(
  source: Extract<RenderFailureSource, { tool: 'kustomize' }>,
  message: string,
): FailurePlace | undefined {
  if (/invalid Kustomization: yaml: line \d+/.test(message)) return at(source.kustomization, yamlLine(message), 0);
  // An entry the overlay's kustomization names that cannot be read: the line that names it.
  const entry = /accumulating resources from '([^']+)'/.exec(message)?.[1];
  if (entry && source.kustomizationText !== undefined) {
    const lines = source.kustomizationText.split('\n');
    const index = lines.findIndex((l) => l.replace(/#.*$/, '').includes(entry));
    if (index >= 0) return at(source.kustomization, index, Math.max(0, lines[index]!.indexOf(entry)));
  }
  return undefined;
}

/** `yaml: line 163:` → 162 (0-based); 0 when the words name no line. */
function yamlLine(message: string): number {
  const n = /yaml: line (\d+)/.exec(message)?.[1];
  return n ? Math.max(0, Number(n) - 1) : 0;
}

function at(file: string, line: number, character: number): FailurePlace {
  const start = { line, character };
  return { file, range: { start, end: start } };
}
