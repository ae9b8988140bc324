// id → entry for every kind of the kinds table, kept exact through mediasoup's own `observer` 'close'
// events, which fire however a resource ends (API close, parent closed, worker died): the event
// bridge (events/bridge.ts), the only subscriber to those, calls remove() before it publishes.
// Indexed by parent, worker and room so that no question the relay asks walks every entry.
import type { types as ms } from 'mediasoup';
import { notFound } from '../errors.js';
import {
  kindsOf,
  roomIdOf,
  type EngineResource,
  type EntryOf,
  type KindPlural,
  type KindTable,
  type RegistryCounts,
  type ResourceKind,
} from './kinds.js';

/** Why the relay itself closed a resource; recorded before `.close()` so the close event can name it. */
export type CloseCause = 'api' | 'shutdown' | 'node_lost';

export interface MediaRegistryOptions {
  /** The kinds table (kinds/index.ts): the kinds it keeps, their parents and what closes with what. */
  kinds: KindTable;
  /**
   * Called once per added entry, before add() returns: the event bridge subscribes to its observers
   * here, and calls remove() when it closes. Required: without it no entry would ever go.
   */
  onAdd: <K extends ResourceKind>(kind: K, entry: EntryOf[K]) => void;
}

type IdSets = Map<ResourceKind, Set<string>>;

export class MediaRegistry {
  /** The kinds table it was given: what the machinery around it (bridge, caps, ops) reads of the kinds. */
  readonly kinds: KindTable;
  /** Every kind in the table's order (parents before children): the order of counts and metrics. */
  readonly order: readonly ResourceKind[];
  /** Kinds that close with each kind (the inverse of the table's `closeWith`). */
  private readonly closedWith: ReadonlyMap<ResourceKind, readonly ResourceKind[]>;
  /** Kinds that may stand for each kind as a parent (the table's `standsFor`). */
  private readonly standIns: ReadonlyMap<ResourceKind, readonly ResourceKind[]>;
  private readonly entries: Map<ResourceKind, Map<string, EntryOf[ResourceKind]>>;
  /** `${parentKind}:${parentId}` → child kind → ids. */
  private readonly byParent = new Map<string, IdSets>();
  private readonly byWorker = new Map<ms.Worker, IdSets>();
  /** Router id → kind → ids of everything in that room (the router itself included). */
  private readonly byRoom = new Map<string, IdSets>();
  private readonly closing = new WeakMap<EngineResource, CloseCause>();
  /** Called after each add (onWhenAdded): a WHEP session learns of the room's new producers this way. */
  private readonly addListeners = new Set<(kind: ResourceKind, entry: EntryOf[ResourceKind]) => void>();

  constructor(private readonly options: MediaRegistryOptions) {
    const { kinds } = options;
    const order = kindsOf(kinds);
    this.kinds = kinds;
    this.order = order;
    this.closedWith = new Map(order.map((parent) => [parent, order.filter((kind) => (kinds[kind].closeWith as readonly ResourceKind[]).includes(parent))]));
    this.standIns = new Map(order.map((parent) => [parent, order.filter((kind) => (kinds[kind] as { standsFor?: ResourceKind }).standsFor === parent)]));
    this.entries = new Map(order.map((kind) => [kind, new Map<string, EntryOf[ResourceKind]>()]));
  }

  /** Registers an entry; the watcher given at construction makes it go when its mediasoup object closes. */
  add<K extends ResourceKind>(kind: K, entry: EntryOf[K]): EntryOf[K] {
    const id = this.idOf(kind, entry);
    this.map(kind).set(id, entry);
    for (const parent of this.kinds[kind].parents) addTo(this.byParent, `${parent}:${this.parentIdOf(entry, parent)}`, kind, id);
    addTo(this.byWorker, entry.worker, kind, id);
    addTo(this.byRoom, roomOf(kind, entry), kind, id);
    this.options.onAdd(kind, entry);
    for (const listener of this.addListeners) listener(kind, entry);
    return entry;
  }

  /** Calls `listener` after every entry added from now on (it must not throw); returns its removal. */
  onWhenAdded(listener: (kind: ResourceKind, entry: EntryOf[ResourceKind]) => void): () => void {
    this.addListeners.add(listener);
    return () => this.addListeners.delete(listener);
  }

  /** Records why the relay is about to close `resource`: its close event (and its children's) will say so. */
  markClosing(resource: EngineResource, cause: CloseCause): void {
    this.closing.set(resource, cause);
  }

  /** The cause recorded by markClosing, if any. */
  closeCauseOf(resource: EngineResource): CloseCause | undefined {
    return this.closing.get(resource);
  }

  /** The open entries of one kind, in the order they were added. */
  list<K extends ResourceKind>(kind: K): EntryOf[K][] {
    return [...this.map(kind).values()];
  }

  get<K extends ResourceKind>(kind: K, id: string): EntryOf[K] | undefined {
    return this.map(kind).get(id);
  }

  /** The entry, or the NOT_FOUND answer naming the kind and id. */
  require<K extends ResourceKind>(kind: K, id: string): EntryOf[K] {
    const entry = this.get(kind, id);
    if (!entry) throw notFound(kind, id);
    return entry;
  }

  /** The ids of every open `kind` entry, in the order they were added. */
  ids(kind: ResourceKind): IterableIterator<string> {
    return this.map(kind).keys();
  }

  /** Every open `kind` entry, in the order they were added. */
  all<K extends ResourceKind>(kind: K): IterableIterator<EntryOf[K]> {
    return this.map(kind).values();
  }

  /**
   * The entry a child's `<parentKind>Id` names: of that kind, or of a kind that stands for it (the
   * kinds table's `standsFor`: a pipe transport for a transport).
   */
  parentOf(parentKind: ResourceKind, id: string): { kind: ResourceKind; entry: EntryOf[ResourceKind] } | undefined {
    const own = this.get(parentKind, id);
    if (own) return { kind: parentKind, entry: own };
    for (const kind of this.standIns.get(parentKind) ?? []) {
      const entry = this.get(kind, id);
      if (entry) return { kind, entry };
    }
    return undefined;
  }

  has(kind: ResourceKind, id: string): boolean {
    return this.map(kind).has(id);
  }

  /** The open `kind` entries whose `parentKind` is `parentId`, in the order they were added. */
  children<K extends ResourceKind>(parentKind: ResourceKind, parentId: string, kind: K): EntryOf[K][] {
    return this.entriesOf(kind, this.byParent.get(`${parentKind}:${parentId}`)?.get(kind));
  }

  /** How many `kind` entries the room of `routerId` holds. */
  countInRoom(routerId: string, kind: ResourceKind): number {
    return this.byRoom.get(routerId)?.get(kind)?.size ?? 0;
  }

  /** Indexes a room under another worker (its oldest live part after the one it was indexed by died). */
  rehome(entry: EntryOf['router'], worker: ms.Worker, slot: number): void {
    const id = roomIdOf(entry);
    if (this.map('router').get(id) !== entry || entry.worker === worker) return;
    removeFrom(this.byWorker, entry.worker, 'router', id);
    entry.worker = worker;
    entry.slot = slot;
    addTo(this.byWorker, worker, 'router', id);
  }

  /** Removes everything a worker held, without closing it; a safety net behind the close events when it dies. */
  dropWorker(worker: ms.Worker): void {
    const held = this.byWorker.get(worker);
    if (!held) return;
    for (const kind of [...this.order].reverse()) {
      for (const id of [...(held.get(kind) ?? [])]) this.remove(kind, id, false);
    }
  }

  /** What one worker holds, for the per-worker metrics. */
  countsOn(worker: ms.Worker): RegistryCounts {
    const held = this.byWorker.get(worker);
    return this.countsBy((kind) => held?.get(kind)?.size ?? 0);
  }

  countOn(worker: ms.Worker, kind: ResourceKind): number {
    return this.byWorker.get(worker)?.get(kind)?.size ?? 0;
  }

  count(kind: ResourceKind): number {
    return this.map(kind).size;
  }

  counts(): RegistryCounts {
    return this.countsBy((kind) => this.map(kind).size);
  }

  /**
   * Forgets one entry and its index rows (when its mediasoup object closed). With `cascade`, what the
   * kinds table closes with it is forgotten and closed too (its own close event then finds no entry).
   */
  remove(kind: ResourceKind, id: string, cascade = true): void {
    const entry = this.map(kind).get(id);
    if (!entry) return;
    this.map(kind).delete(id);
    for (const parent of this.kinds[kind].parents) removeFrom(this.byParent, `${parent}:${this.parentIdOf(entry, parent)}`, kind, id);
    removeFrom(this.byWorker, entry.worker, kind, id);
    removeFrom(this.byRoom, roomOf(kind, entry), kind, id);
    if (!cascade) return;
    for (const child of this.closedWith.get(kind) ?? []) {
      for (const childEntry of this.children(kind, id, child)) {
        const resource = this.resourceOf(child, childEntry);
        this.remove(child, resource.id, true);
        resource.close();
      }
    }
  }

  /** The mediasoup object of an entry: held under the kind's name. */
  resourceOf<K extends ResourceKind>(kind: K, entry: EntryOf[K]): EngineResource {
    return (entry as unknown as Record<string, EngineResource>)[this.kinds[kind].name]!;
  }

  /** The id an entry is kept under: its mediasoup object's, or for a router the room's (roomIdOf). */
  idOf<K extends ResourceKind>(kind: K, entry: EntryOf[K]): string {
    return kind === 'router' ? roomIdOf(entry as EntryOf['router']) : this.resourceOf(kind, entry).id;
  }

  /** The id of an entry's `parent`: its `<parent>Id` field. */
  parentIdOf(entry: EntryOf[ResourceKind], parent: ResourceKind): string {
    return (entry as unknown as Record<string, string>)[`${this.kinds[parent].name}Id`]!;
  }

  private countsBy(count: (kind: ResourceKind) => number): RegistryCounts {
    return Object.fromEntries(this.order.map((kind) => [this.kinds[kind].plural, count(kind)])) as Record<KindPlural, number>;
  }

  private map<K extends ResourceKind>(kind: K): Map<string, EntryOf[K]> {
    return this.entries.get(kind) as Map<string, EntryOf[K]>;
  }

  private entriesOf<K extends ResourceKind>(kind: K, ids: Set<string> | undefined): EntryOf[K][] {
    if (!ids) return [];
    const map = this.map(kind);
    return [...ids].map((id) => map.get(id)!);
  }
}

/** A router is its own room; everything else lives in its router's. */
function roomOf(kind: ResourceKind, entry: EntryOf[ResourceKind]): string {
  return kind === 'router' ? roomIdOf(entry as EntryOf['router']) : (entry as { routerId: string }).routerId;
}

function addTo<Key>(index: Map<Key, IdSets>, key: Key, kind: ResourceKind, id: string): void {
  let byKind = index.get(key);
  if (!byKind) index.set(key, (byKind = new Map<ResourceKind, Set<string>>()));
  let ids = byKind.get(kind);
  if (!ids) byKind.set(kind, (ids = new Set()));
  ids.add(id);
}

function removeFrom<Key>(index: Map<Key, IdSets>, key: Key, kind: ResourceKind, id: string): void {
  const byKind = index.get(key);
  const ids = byKind?.get(kind);
  if (!byKind || !ids) return;
  ids.delete(id);
  if (ids.size === 0) byKind.delete(kind);
  if (byKind.size === 0) index.delete(key);
}
