// The product's own requests and notifications (declared in protocol.ts): refresh, the kubeconfig's
// contexts, the field managers seen, the ownership view, dry-run verify, the force preview, the
// overlays that use a file, and the client's word on
// which extensions report syntax errors. Each request is also served as its command (commands.ts).
import type { Connection } from 'vscode-languageserver/node';
import { readKubeconfig } from '../../cluster';
import { managerNames, ownershipLegend, ownershipView } from '../../core/findings';
import {
  notifications,
  onNotification,
  requests,
  type ContextsResult,
  type OverlaysResult,
  type OwnershipResult,
  type ReleasesResult,
} from '../../protocol';
import { forcePreviewAt } from '../force-preview';
import { fleetView } from '../fleet-view';
import type { DocumentState } from '../workspace';
import type { RefreshScheduler } from '../refresh';
import type { DryRunAnswers } from '../verified';
import { resourceAt, type Workspace } from '../workspace';
import type { Commands } from './commands';

export interface RequestContext {
  readonly connection: Connection;
  readonly commands: Commands;
  readonly workspace: Workspace;
  readonly refresh: RefreshScheduler;
  readonly dryRuns: DryRunAnswers;
  readonly rendered: RenderChoices;
  readonly env: NodeJS.ProcessEnv;
}

/** The requests about rendered sources, which they answer (lsp/rendered.ts): render charts again, which overlays count, which release is judged. */
export interface RenderChoices {
  renderAgain(): void;
  overlayChoices(uri: string): Promise<OverlaysResult>;
  releaseChoices(uri: string): Promise<ReleasesResult>;
}

export function serveRequests({
  connection,
  commands,
  workspace,
  refresh,
  dryRuns,
  rendered,
  env,
}: RequestContext): void {
  commands.serve(connection, requests.refresh, async (params) => {
    // A user's command connects even with no manifest open; the Kubernetes extension's context
    // switch (sent without `connect`) only refreshes what is already connected.
    if (params?.connect && workspace.clusterAccess) await workspace.sessionFor(await workspace.settingsFor(params.uri));
    workspace.sessions.refresh();
    // Charts are rendered again: where a chart is installed is read again with them.
    rendered.renderAgain();
    refresh.schedule();
    return null;
  });

  // (A context picked or a field manager changed arrives as didChangeConfiguration, which
  // settingsSources turns into a refresh.)
  onNotification(connection, notifications.syntaxServices, (params) => {
    workspace.setSyntaxServices(params);
    refresh.schedule();
  });

  commands.serve(connection, requests.contexts, async (params): Promise<ContextsResult> => {
    const settings = await workspace.settingsFor(params?.uri);
    const read = await readKubeconfig({ kubeconfig: settings.kubeconfig }, env);
    if (!read.ok) return { contexts: [], problem: read.problem.message };
    return {
      ...(settings.context || read.value.currentContext
        ? { current: settings.context || read.value.currentContext }
        : {}),
      contexts: read.value.contexts.map((c) => ({
        name: c.name,
        cluster: c.cluster,
        ...(c.namespace ? { namespace: c.namespace } : {}),
        ...(c.server ? { server: c.server } : {}),
      })),
    };
  });

  commands.serve(connection, requests.managers, async (params): Promise<string[]> => {
    const state = await workspace.analysisOf(params.uri);
    const names = new Set<string>([state?.settings.fieldManager ?? 'kubectl', 'kubectl']);
    for (const { facts } of state?.analysis.resources ?? []) {
      if (facts?.live.state === 'exists') for (const n of managerNames(facts.live.object)) names.add(n);
    }
    return [...names];
  });

  commands.serve(connection, requests.ownership, async (params): Promise<OwnershipResult | null> => {
    const state = await workspace.analysisOf(params.uri);
    const hit =
      state && (params.position ? resourceAt(state.analysis.resources, params.position) : state.analysis.resources[0]);
    if (!hit || !hit.facts || hit.facts.live.state !== 'exists') return null;
    const { resource } = hit;
    const live = hit.facts.live.object;
    const manager = typeof params.manager === 'string' && params.manager !== '' ? params.manager : undefined;
    return {
      title: `${resource.kind} ${resource.namespace ? `${resource.namespace}/` : ''}${resource.name ?? ''} (live, ${manager === undefined ? 'with owners' : `lines of ${manager}`})`,
      text: ownershipView(live, hit.facts.schema, { now: Date.now(), ...(manager !== undefined ? { manager } : {}) }),
      managers: ownershipLegend(live),
      ...(manager !== undefined ? { manager } : {}),
    };
  });

  commands.serve(connection, requests.verify, (params) => dryRuns.verify(params.uri));

  // What forcing would take and who takes it back: the code action on every field conflict runs it.
  commands.serve(connection, requests.forcePreview, async (params) => {
    const state = await workspace.analysisOf(params.uri);
    // Several contexts: the one the fix names (each context's own facts, session and settings).
    const column =
      state?.fleet && typeof params.context === 'string'
        ? state.fleet.find((c) => c.context === params.context)
        : undefined;
    const chosen =
      state && column
        ? { ...state, settings: column.settings, session: column.session, analysis: column.analysis }
        : state;
    return chosen ? forcePreviewAt(chosen, params.position) : null;
  });

  // The Fleet view: every open document judged in several contexts, a cell per object and context.
  commands.serve(connection, requests.fleet, async () => {
    const states: DocumentState[] = [];
    for (const document of workspace.documents.all()) {
      const state = await workspace.analysisOf(document.uri);
      if (state) states.push(state);
    }
    return fleetView(states);
  });

  // The overlays that use a file, for the user to choose which count; the client writes the choice
  // to the kustomizeOverlays setting, whose change renders again (settings changes refresh).
  commands.serve(connection, requests.overlays, (params) => rendered.overlayChoices(params.uri));
  // The releases a chart is installed as, for the user to choose the one judged (the folder's helmReleases).
  commands.serve(connection, requests.releases, (params) => rendered.releaseChoices(params.uri));
}
