// The text of a hover, as Markdown: who owns a field of the live object, the live value when it
// differs, and what each manager usually is. Pure, so it is tested without an editor.
import { appliedByLines } from './applied-by';
import type { ResourceFacts } from './facts';
import { showValue, showValues } from './show-value';
import { isJsonObject, jsonDepthExceeds, jsonEqual, type JsonObject, type JsonValue } from '../json';
import type { ManifestNode, ManifestResource } from '../manifest/manifest';
import { manifestLimits, nodeToJson } from '../manifest/manifest';
import { managerRole } from './managers';
import { describeManager, formatServerPath, qualifiedResource } from '../ssa/messages';
import { ownersOf, type FieldOwner } from './ownership';
import { valueAtPath } from '../ssa/merge';
import type { FieldPath } from '../ssa/path';
import { rootTypeFor } from '../ssa/schema';
import { applierManagers } from '../gitops/appliers';

export function objectHover(resource: ManifestResource, facts: ResourceFacts | undefined, now: number): string {
  const title = `**${resource.kind} ${JSON.stringify(resource.name ?? resource.generateName ?? '')}**`;
  if (!facts) return `${title}\n\nNot checked against a cluster.`;
  if (facts.kind.state === 'notServed')
    return `${title}\n\nThe cluster does not serve ${resource.kind} in ${resource.apiVersion}.`;
  if (facts.live.state === 'invalidName') return `${title}\n\n${facts.live.message}`;
  if (facts.kind.state === 'unavailable' || facts.live.state === 'unavailable') {
    return `${title}\n\nThe cluster could not be asked: ${facts.live.state === 'unavailable' ? facts.live.message : facts.kind.state === 'unavailable' ? facts.kind.message : ''}`;
  }
  if (facts.kind.state === 'pending' || facts.live.state === 'pending') return `${title}\n\nAsking the cluster…`;
  const resourceName = qualifiedResource({ group: facts.kind.group, resource: facts.kind.resource });
  if (facts.live.state === 'absent')
    return `${title}\n\n${resourceName} ${JSON.stringify(resource.name ?? '')} does not exist yet: applying creates it.`;
  const live = facts.live.object;
  const metadata = isJsonObject(live.metadata) ? live.metadata : {};
  const lines = [title, ''];
  const created = typeof metadata.creationTimestamp === 'string' ? metadata.creationTimestamp : undefined;
  lines.push(
    `Exists${created ? `, created ${when(created, now)}` : ''}; resourceVersion \`${String(metadata.resourceVersion ?? '')}\`.`,
  );
  // Who really applies it (an Argo CD Application, a Flux Kustomization, a Helm release) and its policy.
  const appliers = appliedByLines(facts);
  if (appliers.length > 0) lines.push('', ...appliers);
  const entries = Array.isArray(metadata.managedFields) ? metadata.managedFields.filter(isJsonObject) : [];
  if (entries.length > 0) {
    lines.push('', '| manager | operation | subresource | apiVersion | last write |', '|---|---|---|---|---|');
    for (const e of entries) {
      lines.push(
        `| ${cell(e.manager)} | ${cell(e.operation)} | ${cell(e.subresource)} | ${cell(e.apiVersion)} | ${typeof e.time === 'string' ? when(e.time, now) : notRecorded} |`,
      );
    }
  } else {
    lines.push('', 'No field ownership is recorded (the next server-side apply records `before-first-apply`).');
  }
  return lines.join('\n');
}

export function fieldHover(
  resource: ManifestResource,
  facts: ResourceFacts | undefined,
  path: FieldPath,
  node: ManifestNode,
  now: number,
): string {
  const title = `**\`${formatServerPath(path)}\`**`;
  if (!facts || facts.live.state !== 'exists') return `${title}\n\n${unknownOwnership(facts)}`;
  const live: JsonObject = facts.live.object;
  const owners = ownersOf(live, path);
  const lines = [title, ''];
  if (owners.length === 0) lines.push('No field manager owns this field on the live object.');
  else {
    lines.push(...ownersTable(owners, now));
    if (owners.some((o) => !o.exact)) lines.push('', '_(below): owns fields inside this one._');
  }
  // A Secret is read as metadata only: outside metadata there is no live value to show.
  const secret =
    resource.kind === 'Secret' &&
    resource.apiVersion === 'v1' &&
    path[0]?.kind === 'field' &&
    !['metadata', 'apiVersion', 'kind'].includes(path[0].name);
  if (!secret && node.kind === 'scalar') {
    const root = facts.schema && rootTypeFor(facts.schema, resource.apiVersion, resource.kind);
    const liveValue = valueAtPath(facts.schema, root, live, path);
    const mine: JsonValue = nodeToJson(node);
    if (liveValue === undefined) lines.push('', 'Not set on the live object.');
    // (showValue writes JSON, recursively: a live value may nest far deeper than the manifest.)
    else if (jsonDepthExceeds(liveValue, manifestLimits.depth))
      lines.push(
        '',
        `Live value: nested deeper than ${manifestLimits.depth} levels (manifest: \`${showValue(mine)}\`).`,
      );
    else if (!jsonEqual(liveValue, mine)) {
      const [shownLive, shownMine] = showValues(liveValue, mine);
      lines.push('', `Live value: \`${shownLive}\` (manifest: \`${shownMine}\`).`);
    } else lines.push('', 'Same value as the live object: applying it shares ownership.');
  }
  const explained = new Set<string>();
  for (const o of owners) {
    const role = managerRole(o.manager);
    const key = `${o.manager.manager}/${o.manager.subresource ?? ''}`;
    if (!role || explained.has(key)) continue;
    explained.add(key);
    lines.push('', `${describeManager(o.manager)}: ${role.explanation}`);
  }
  // A GitOps controller owns the field: which of its objects applies the object, and its policy.
  if (owners.some((o) => Object.prototype.hasOwnProperty.call(applierManagers, o.manager.manager))) {
    const appliers = appliedByLines(facts);
    if (appliers.length > 0) lines.push('', ...appliers);
  }
  return lines.join('\n');
}

/** A field a source line writes into an object, with its node there. */
export interface WrittenField {
  readonly path: FieldPath;
  readonly node: ManifestNode;
}

/**
 * The hover of a line that writes several fields (a template's `include` or `toYaml` line, in the
 * order they are written): the fields it leads with (`lead.fields`, indexes into `fields`: those
 * the line's findings are about, `lead.diagnosed`, else those another manager owns) each in full,
 * else the last field written, the deepest; then the others by name. The hover never speaks of one
 * field while the line's finding, or its ownership hint, is about another.
 */
export function lineHover(
  resource: ManifestResource,
  facts: ResourceFacts | undefined,
  fields: readonly WrittenField[],
  lead: { readonly fields: ReadonlySet<number>; readonly diagnosed: boolean },
  now: number,
): string {
  const first =
    lead.fields.size > 0 ? [...lead.fields].sort((a, b) => a - b) : fields.length > 0 ? [fields.length - 1] : [];
  const parts = first.map((i) => fieldHover(resource, facts, fields[i]!.path, fields[i]!.node, now));
  const others = fields.filter((_, i) => !first.includes(i)).map((f) => `\`${formatServerPath(f.path)}\``);
  if (others.length > 0) {
    const shown =
      others.length > maxOthersNamed
        ? [...others.slice(0, maxOthersNamed), `and ${others.length - maxOthersNamed} more`]
        : others;
    parts.push(`Also written on this line${lead.diagnosed ? ', without a finding' : ''}: ${shown.join(', ')}.`);
  }
  return parts.join('\n\n---\n\n');
}

/** A `toYaml` of a whole map can write hundreds of fields on one line: the hover names this many. */
const maxOthersNamed = 8;

/** Why a field's owners are not known: not asked yet, or the cluster's refusal in its own words. */
function unknownOwnership(facts: ResourceFacts | undefined): string {
  // No facts at all: no cluster is contacted for this document (an untrusted workspace, no access).
  if (!facts) return 'Ownership unknown: not checked against a cluster (the status bar says why).';
  if (facts.live.state === 'absent') return 'The object does not exist yet: nobody owns this field.';
  if (facts.kind.state === 'notServed') return `Ownership unknown: ${facts.kind.message}`;
  if (facts.live.state === 'unavailable') return `Ownership unknown: ${facts.live.message}`;
  if (facts.kind.state === 'unavailable') return `Ownership unknown: ${facts.kind.message}`;
  return 'Ownership unknown (no answer from the cluster yet).';
}

/** The owners of a field as a Markdown table (the hover's, and the ownership hints' tooltip). */
export function ownersTable(owners: readonly FieldOwner[], now: number): string[] {
  return [
    '| owner | operation | subresource | apiVersion | last write |',
    '|---|---|---|---|---|',
    ...owners.map((o) => ownerRow(o, now)),
  ];
}

function ownerRow(o: FieldOwner, now: number): string {
  const name = `${cell(o.manager.manager)}${o.exact ? '' : ' (below)'}`;
  return `| ${name} | ${o.manager.operation} | ${cell(o.manager.subresource)} | ${o.apiVersion} | ${o.time ? when(o.time, now) : notRecorded} |`;
}

// The server leaves `time` out of some entries (writes through the scale subresource, here).
const notRecorded = '_not recorded_';

function cell(v: JsonValue | undefined): string {
  return typeof v === 'string' ? v.replace(/\|/g, '\\|') : '';
}

/** "3 min ago (2026-11-29T18:00:00Z)". */
export function when(time: string, now: number): string {
  const relative = ago(time, now);
  return relative === undefined ? time : `${relative} (${time})`;
}

/** "3 min ago", "1 day ago"; undefined for a time the server wrote oddly. */
export function ago(time: string, now: number): string | undefined {
  const t = Date.parse(time);
  if (Number.isNaN(t)) return undefined;
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  const days = Math.round(s / 86400);
  return `${days} ${days === 1 ? 'day' : 'days'} ago`;
}
