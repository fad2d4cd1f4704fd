// The *Fleet* view's rows: each open document judged in several contexts, its objects and each
// context's cell of the fleet table (core/findings/fleet.ts fleetCell, as the command line's table
// and the code lens say it), with the line each object starts on, for the client to jump to.
import type { FleetViewResult } from '../protocol';
import { fleetCells } from './fleet';
import { objectStart } from './manifest-source';
import type { DocumentState } from './workspace';

/** The view's rows for the documents given (those judged in one context are left out). */
export function fleetView(states: readonly DocumentState[]): FleetViewResult {
  const contexts: string[] = [];
  const documents: FleetViewResult['documents'] = [];
  for (const state of states) {
    const fleet = state.fleet;
    if (!fleet) continue;
    for (const c of fleet) if (!contexts.includes(c.context)) contexts.push(c.context);
    documents.push({
      uri: state.document.uri,
      objects: state.analysis.resources.map(({ resource }, i) => ({
        title: `${resource.kind} ${resource.namespace ? `${resource.namespace}/` : ''}${resource.name ?? resource.generateName ?? ''}`,
        line: objectStart(resource).line,
        cells: fleetCells(fleet, i),
      })),
    });
  }
  return { contexts, documents };
}
