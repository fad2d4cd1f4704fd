// Hovers: on a field, who owns it and what the live object holds; on the object's identity (kind,
// apiVersion, metadata, its name), the object itself. The text comes from core/findings/hover-text.ts.
import type { Connection, Hover, Position } from 'vscode-languageserver/node';
import { fieldHover, nodeAt, objectHover } from '../../core/findings';
import { isIdentityPath } from '../../core/manifest/manifest';
import type { RenderedSources } from '../rendered';
import { notLive } from '../stale';
import { resourceAt, type Workspace } from '../workspace';

export function serveHovers(connection: Connection, workspace: Workspace, rendered: RenderedSources): void {
  connection.onHover(async (params): Promise<Hover | null> => {
    const hover = await hoverOf(params.textDocument.uri, params.position);
    // While the cluster does not answer, owners and live values are as it last said.
    const stale = hover && (await workspace.stalenessOf(params.textDocument.uri));
    if (!hover || !stale || typeof hover.contents !== 'object' || !('kind' in hover.contents)) return hover;
    return { ...hover, contents: { kind: hover.contents.kind, value: `${notLive(stale, hover.contents.kind)}\n\n${hover.contents.value}` } };
  });

  async function hoverOf(uri: string, position: Position): Promise<Hover | null> {
    // A template, a values file, a patch: the hover is the rendered field's.
    const onRendered = await rendered.hover(uri, position);
    if (onRendered !== undefined) return onRendered;
    const state = await workspace.analysisOf(uri);
    const hit = state && resourceAt(state.analysis.resources, position);
    if (!hit) return null;
    const now = Date.now();
    const at = nodeAt(hit.resource, position, hit.facts?.schema);
    const value =
      !at || isIdentityPath(at.path)
        ? objectHover(hit.resource, hit.facts, now)
        : fieldHover(hit.resource, hit.facts, at.path, at.node, now);
    return { contents: { kind: 'markdown', value }, ...(at ? { range: at.keyRange } : {}) };
  }
}
