// The finding: one thing to tell the user, on one range of the text. Plain data that crosses every
// boundary (the editor's diagnostics carry it in `data`, the command line prints it); its code's
// severity, title and link come from the rule catalogue, and the user's settings may change the
// severity per code.
import type { JsonValue } from '../json';
import type { ManifestProblem, ManifestResource, NamedObjectTarget, Range } from '../manifest/manifest';
import type { ManagerIdentity } from '../ssa/messages';
import { defaultSeverity, meansNotJudged, type FindingCode, type Severity } from './catalogue';

// The codes, their default severities and documentation links live in the rule catalogue.
export type { FindingCode, Severity } from './catalogue';

/** The object a finding is about: a generateName object under its prefix (objectIdentity). */
export type ObjectIdentity = NamedObjectTarget;

/** One thing to tell the user, on one range of the text. Plain data: it crosses every boundary. */
export interface Finding {
  readonly code: FindingCode;
  readonly severity: Severity;
  /** The sentence the user reads. */
  readonly message: string;
  readonly range: Range;
  /** The object it is about (absent for problems of the text itself). */
  readonly object?: ObjectIdentity;
  /** The field, in the API server's notation: `.spec.template.spec.containers[name="app"].image`. */
  readonly path?: string;
  /** The other field manager involved. */
  readonly manager?: ManagerIdentity;
  readonly liveValue?: JsonValue;
  readonly manifestValue?: JsonValue;
  /** What the API server itself would say, word for word, when it would refuse the request. */
  readonly serverMessage?: string;
  /**
   * The field the server's refusal names (`details.causes[].field`) when it is not `path`: a
   * StatefulSet's `spec` for a change of `.spec.serviceName`.
   */
  readonly serverField?: string;
  /** Where the Kubernetes documentation explains it. */
  readonly docs?: string;
}

export function objectIdentity(resource: ManifestResource): ObjectIdentity {
  return {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    name: resource.name ?? resource.generateName ?? '',
    ...(resource.namespace !== undefined ? { namespace: resource.namespace } : {}),
  };
}

export type SeverityOverrides = Readonly<Record<string, Severity | 'off'>>;

/** The user's severity overrides applied: another level, or the finding left out for `off`. */
export function withSeverity(findings: readonly Finding[], overrides: SeverityOverrides | undefined): Finding[] {
  if (!overrides || Object.keys(overrides).length === 0) return [...findings];
  const out: Finding[] = [];
  for (const f of findings) {
    const level = Object.hasOwn(overrides, f.code) ? overrides[f.code] : undefined;
    // What says that (a part of) a file was not judged is never hidden: silence over it would read
    // as "nothing to fear". It can be lowered, not turned off.
    if (level === 'off') {
      if (meansNotJudged(f.code)) out.push(f);
      continue;
    }
    out.push(level && level !== f.severity ? { ...f, severity: level } : f);
  }
  return out;
}

/** Problems of the text itself (syntax, decoding, duplicate keys), as findings. */
export function problemFindings(problems: readonly ManifestProblem[], overrides?: SeverityOverrides): Finding[] {
  return withSeverity(
    problems.map((p) => ({ code: p.code, severity: defaultSeverity(p.code), message: p.message, range: p.range })),
    overrides,
  );
}
