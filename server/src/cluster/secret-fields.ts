// A Secret is read as metadata only (live-objects.ts), so two of its fields that hold no value but
// decide what an update may do are not in the cache: `type`, which may never change, and
// `immutable`, which, once true, freezes `data` and itself (the server's ValidateSecretUpdate,
// k8s.io/kubernetes pkg/apis/core/validation). Each is learned with one request whose answer holds
// no value either:
// - `type`: a GET of the Secret as a Table without its object (`as=Table`, `includeObject=None`).
//   The server's printer for Secrets gives Name, Type, Data (a count of keys) and Age; the Table's
//   resourceVersion is the Secret's, so it says which version (and so which incarnation: a
//   resourceVersion is never reused) the row is of. With the object, the row would carry the
//   Secret's annotations, where a client-side `kubectl apply` keeps a copy of every value.
// - `immutable`: a dry-run JSON Patch of two `test` operations, the Secret's uid and then
//   `/immutable` equal to true, answered as a Table without the object, for the same reason. It
//   succeeds (and changes nothing) only when that Secret is immutable; a 422 Invalid means a test
//   failed. Asked only when some manager's fields record `immutable`, or no fields are recorded at
//   all: otherwise nobody set it.
//
// A type is the object's for its life and an immutable Secret stays immutable, so both answers are
// kept per uid; "not immutable" holds for the resourceVersion it was asked at, and so does a type
// that could not be told because the Secret had changed since it was read. A failed read leaves
// the field unknown (the prediction then says nothing of it, as before); it is asked again after a
// pause, and at once after Refresh. A 403 is no health problem: many users may not patch Secrets.
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json';
import type { ClusterTransport } from './http';
import { objectPath } from './names';
import { parseJson, parseStatus } from './problems';
import type { ApiResourceInfo, Disposable } from './types';
import { tell } from './listeners';

export const secretTable = 'application/json;as=Table;g=meta.k8s.io;v=v1';

/** What a Secret's update validation needs of it beyond its metadata. */
export interface SecretFieldsLookup {
  /** The live Secret with what is known of its `type` and `immutable`; starts the reads that are missing, never waits. */
  peek(resource: ApiResourceInfo, live: JsonObject): JsonObject;
  /** The same once both reads have an answer (the command line, dry-run confirmations). */
  get(resource: ApiResourceInfo, live: JsonObject): Promise<JsonObject>;
  /** What a peek answers for this Secret changed. */
  onChange(listener: (secret: { namespace: string; name: string }) => void): Disposable;
}

type Answer<T> =
  | { readonly state: 'known'; readonly value: T }
  | { readonly state: 'unknown'; readonly at: number; readonly forbidden: boolean };

interface Entry {
  /** Keyed by the resourceVersion it was asked at: a Table of a later version tells nothing of this one. */
  type?: Answer<string> & { readonly resourceVersion: string };
  typeReading?: Promise<void>;
  /** Keyed by the resourceVersion it was asked at; `true` holds for every later one. */
  immutable?: Answer<boolean> & { readonly resourceVersion: string };
  immutableReading?: Promise<void>;
}

/** A failed read (not a 403) is asked again when peeked this long after it. */
const RETRY_AFTER_MS = 30_000;
/** Uids remembered at most; the oldest go first. */
const MAX_ENTRIES = 10_000;

export class SecretFields implements SecretFieldsLookup {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(secret: { namespace: string; name: string }) => void>();
  /** The enriched copy handed out for each live object, so equal answers keep the same identity (analysis caches compare by identity). */
  private readonly copies = new WeakMap<JsonObject, { key: string; copy: JsonObject }>();
  private disposed = false;

  constructor(private readonly transport: ClusterTransport) {}

  peek(resource: ApiResourceInfo, live: JsonObject): JsonObject {
    const id = identity(live);
    if (!id) return live;
    const entry = this.entryFor(id.uid);
    if (this.shouldAskType(entry, id.resourceVersion) && !entry.typeReading) void this.readType(resource, id, entry);
    if (mayBeImmutable(live) && this.shouldAskImmutable(entry, id.resourceVersion) && !entry.immutableReading)
      void this.readImmutable(resource, id, entry);
    return this.enriched(live, entry, id.resourceVersion);
  }

  async get(resource: ApiResourceInfo, live: JsonObject): Promise<JsonObject> {
    this.peek(resource, live);
    const id = identity(live);
    const entry = id ? this.entries.get(id.uid) : undefined;
    if (entry) await Promise.all([entry.typeReading, entry.immutableReading]);
    return this.peek(resource, live);
  }

  onChange(listener: (secret: { namespace: string; name: string }) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The user asked to refresh: unknown answers are asked again on the next peek. */
  refresh(): void {
    for (const entry of this.entries.values()) {
      if (entry.type?.state === 'unknown') delete entry.type;
      if (entry.immutable?.state === 'unknown') delete entry.immutable;
    }
  }

  dispose(): void {
    this.disposed = true;
    this.entries.clear();
    this.listeners.clear();
  }

  private entryFor(uid: string): Entry {
    let entry = this.entries.get(uid);
    if (!entry) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      entry = {};
      this.entries.set(uid, entry);
    }
    return entry;
  }

  private shouldAsk(answer: Answer<unknown> | undefined): boolean {
    if (this.disposed) return false;
    if (!answer) return true;
    return answer.state === 'unknown' && !answer.forbidden && Date.now() - answer.at >= RETRY_AFTER_MS;
  }

  /** Whether to ask for the type: never once known (it cannot change), else as shouldAskAgain says. */
  private shouldAskType(entry: Entry, resourceVersion: string): boolean {
    return entry.type?.state !== 'known' && this.shouldAskAgain(entry.type, resourceVersion);
  }

  /** Whether to ask if the Secret is immutable: never once it is (it cannot be unset), else as shouldAskAgain says. */
  private shouldAskImmutable(entry: Entry, resourceVersion: string): boolean {
    const held = entry.immutable;
    return !(held?.state === 'known' && held.value) && this.shouldAskAgain(held, resourceVersion);
  }

  /**
   * At once when the answer held is about an older resourceVersion (the object changed since),
   * unless the user may not read the answer at all; otherwise as any answer is asked again (shouldAsk).
   */
  private shouldAskAgain(
    held: (Answer<unknown> & { readonly resourceVersion: string }) | undefined,
    resourceVersion: string,
  ): boolean {
    const refused = held?.state === 'unknown' && held.forbidden;
    const aboutAnOlderVersion = held !== undefined && held.resourceVersion !== resourceVersion;
    if (aboutAnOlderVersion && !refused) return !this.disposed;
    return this.shouldAsk(held);
  }

  private enriched(live: JsonObject, entry: Entry, resourceVersion: string): JsonObject {
    const type = entry.type?.state === 'known' ? entry.type.value : undefined;
    const imm = entry.immutable;
    const immutable =
      imm?.state === 'known' && (imm.value || imm.resourceVersion === resourceVersion) ? imm.value : undefined;
    if (type === undefined && immutable === undefined) return live;
    const key = `${type ?? ''}\u0000${immutable ?? ''}`;
    const held = this.copies.get(live);
    if (held?.key === key) return held.copy;
    const copy: JsonObject = {
      ...live,
      ...(type !== undefined ? { type } : {}),
      ...(immutable !== undefined ? { immutable } : {}),
    };
    this.copies.set(live, { key, copy });
    return copy;
  }

  private settle(id: Identity): void {
    tell(this.listeners, { namespace: id.namespace, name: id.name });
  }

  private readType(resource: ApiResourceInfo, id: Identity, entry: Entry): Promise<void> {
    const reading = (async () => {
      const path = objectPath(resource, id.namespace, id.name);
      if (!path.ok) return unknown(false);
      const outcome = await this.transport.send({
        method: 'GET',
        path: path.value,
        query: { includeObject: 'None' },
        accept: secretTable,
        purpose: { verb: 'get', resource: 'secrets', namespace: id.namespace, optional: true },
      });
      if (outcome.kind !== 'response' || outcome.status !== 200)
        return unknown(outcome.kind === 'response' && outcome.status === 403);
      const type = tableType(parseJson(outcome.body), id.resourceVersion);
      return type === undefined ? unknown(false) : ({ state: 'known', value: type } as const);
    })().then((answer) => {
      entry.typeReading = undefined;
      if (this.disposed) return;
      entry.type = { ...answer, resourceVersion: id.resourceVersion };
      if (answer.state === 'known') this.settle(id);
    });
    entry.typeReading = reading;
    return reading;
  }

  private readImmutable(resource: ApiResourceInfo, id: Identity, entry: Entry): Promise<void> {
    const reading = (async (): Promise<Answer<boolean>> => {
      const path = objectPath(resource, id.namespace, id.name);
      if (!path.ok) return unknown(false);
      const body = JSON.stringify([
        { op: 'test', path: '/metadata/uid', value: id.uid },
        { op: 'test', path: '/immutable', value: true },
      ]);
      const outcome = await this.transport.send({
        method: 'PATCH',
        dryRun: 'All',
        path: path.value,
        contentType: 'application/json-patch+json',
        body,
        query: { includeObject: 'None' },
        accept: secretTable,
        purpose: { verb: 'patch', resource: 'secrets', namespace: id.namespace, optional: true },
      });
      if (outcome.kind !== 'response') return unknown(false);
      // Both tests held, the uid's among them: this incarnation is immutable.
      if (outcome.status === 200)
        return isTable(parseJson(outcome.body)) ? { state: 'known', value: true } : unknown(false);
      // A failed test is a 422 Invalid that does not say which test failed: not immutable, or
      // another incarnation (which is asked about under its own uid), where nothing is judged anyway.
      if (outcome.status === 422 && parseStatus(outcome.body)?.reason === 'Invalid')
        return { state: 'known', value: false };
      return unknown(outcome.status === 403);
    })().then((answer) => {
      entry.immutableReading = undefined;
      if (this.disposed) return;
      entry.immutable = { ...answer, resourceVersion: id.resourceVersion };
      if (answer.state === 'known') this.settle(id);
    });
    entry.immutableReading = reading;
    return reading;
  }
}

interface Identity {
  readonly uid: string;
  readonly resourceVersion: string;
  readonly namespace: string;
  readonly name: string;
}

function identity(live: JsonObject): Identity | undefined {
  const m = isJsonObject(live.metadata) ? live.metadata : undefined;
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  if (!m || !s(m.uid) || !s(m.name) || !s(m.namespace)) return undefined;
  return { uid: s(m.uid), resourceVersion: s(m.resourceVersion), namespace: s(m.namespace), name: s(m.name) };
}

const unknown = (forbidden: boolean): Answer<never> => ({ state: 'unknown', at: Date.now(), forbidden });

/**
 * Whether `immutable` may be set: some manager's fields record it, or no manager's fields are
 * recorded (they were cleared, or the object predates them), so nothing can be told from them.
 */
export function mayBeImmutable(live: JsonObject): boolean {
  const entries =
    isJsonObject(live.metadata) && Array.isArray(live.metadata.managedFields) ? live.metadata.managedFields : [];
  const recorded = entries.filter((e) => isJsonObject(e) && isJsonObject(e.fieldsV1));
  if (recorded.length === 0) return true;
  return recorded.some((e) => isJsonObject(e) && isJsonObject(e.fieldsV1) && 'f:immutable' in e.fieldsV1);
}

function isTable(answer: unknown): answer is JsonObject & { columnDefinitions: JsonValue[]; rows: JsonValue[] } {
  return (
    isJsonObject(answer) &&
    answer.kind === 'Table' &&
    Array.isArray(answer.columnDefinitions) &&
    Array.isArray(answer.rows)
  );
}

/** The Type cell of the one row of a Secret's Table, when the Table is of the version `resourceVersion`. */
export function tableType(table: unknown, resourceVersion: string): string | undefined {
  if (!isTable(table) || table.rows.length !== 1) return undefined;
  const version = isJsonObject(table.metadata) ? table.metadata.resourceVersion : undefined;
  if (!resourceVersion || version !== resourceVersion) return undefined;
  const column = table.columnDefinitions.findIndex((c) => isJsonObject(c) && c.name === 'Type');
  const row = table.rows[0];
  if (column < 0 || !isJsonObject(row) || !Array.isArray(row.cells)) return undefined;
  const type = row.cells[column];
  return typeof type === 'string' ? type : undefined;
}
