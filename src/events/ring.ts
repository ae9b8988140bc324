// The replay buffer of the event bus: the last events as JSON bytes outside the JS heap.
//
// Keeping the last 10,000 events as objects (or as JSON strings) cost the relay about 7 % of its CPU
// under load: every event lives for seconds, so the garbage collector copies it twice and promotes it,
// and the old generation grows by the events' size. Here an event's JSON is written into segments of
// bytes allocated outside the heap and reused in turn; per event the heap keeps only its type and
// router ids (strings the relay holds anyway) and two numbers in typed arrays.
import type { EventRouters } from './types.js';

/** Bytes of one segment; an event never spans two. */
export const SEGMENT_BYTES = 256 * 1024;
/** Room for this many bytes of JSON per event on average before events leave early (EVENTS_BUFFER_SIZE × 1 KiB in all). */
export const BYTES_PER_EVENT = 1024;
/** An event whose JSON is longer than this is kept as a string on the heap instead (rare: a worker.died of hundreds of rooms). */
const MAX_IN_SEGMENT = SEGMENT_BYTES / 2;

export interface EventRingStats {
  /** Events held. */
  events: number;
  /** Bytes of segments allocated (outside the JS heap). */
  segmentBytes: number;
  /** Events held as strings on the heap, each longer than half a segment. */
  large: number;
}

/**
 * Events by sequence number, the oldest going first when `capacity` events are held or when their
 * bytes are needed (at most `capacity` × BYTES_PER_EVENT bytes, in segments allocated as they fill).
 * @example ring.append(seq, id, 'router.closed', routerId, JSON.stringify(event)); ring.json(seq)
 */
export class EventRing {
  /** Seq of the oldest event held (last + 1 when empty). */
  first = 1;
  /** Seq of the newest event appended (0 before the first). */
  last = 0;
  /**
   * The id of the newest event that left the ring (or the id the ring started after): a reader
   * resuming from an id at or above it finds every later event here.
   */
  droppedId: number;

  /** Per slot: the event's id (ids increase with seq: src/events/ids.ts). */
  private readonly ids: Float64Array;
  private readonly types: string[];
  private readonly routers: EventRouters[];
  /** Per slot: the segment holding the JSON, its start, its length; undefined segment: in `large`. */
  private readonly segmentOf: (Buffer | undefined)[];
  private readonly start: Uint32Array;
  private readonly length: Uint32Array;
  private readonly large = new Map<number, string>();
  /** Segments in the order they were filled, the one being written last; the seq of the newest event in each. */
  private readonly segments: { bytes: Buffer; lastSeq: number }[] = [];
  private readonly maxSegments: number;
  private used = 0;

  constructor(
    readonly capacity: number,
    startId = 0,
  ) {
    this.droppedId = startId;
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error('EventRing: capacity must be a positive integer');
    this.ids = new Float64Array(capacity);
    this.types = new Array<string>(capacity);
    this.routers = new Array<EventRouters>(capacity);
    this.segmentOf = new Array<Buffer | undefined>(capacity);
    this.start = new Uint32Array(capacity);
    this.length = new Uint32Array(capacity);
    this.maxSegments = Math.max(2, Math.ceil((capacity * BYTES_PER_EVENT) / SEGMENT_BYTES));
  }

  /** Appends the event `seq` (the previous one + 1), whose id is above the previous one's, making room as needed. */
  append(seq: number, id: number, type: string, routers: EventRouters, json: string): void {
    if (seq !== this.last + 1) throw new Error(`EventRing: seq ${seq} after ${this.last}`);
    if (this.last >= this.first && id <= this.idOf(this.last)) throw new Error(`EventRing: id ${id} after ${this.idOf(this.last)}`);
    this.last = seq;
    // The slot is the one of seq - capacity: that event leaves first.
    if (seq - this.first + 1 > this.capacity) this.drop(seq - this.capacity);
    const slot = seq % this.capacity;
    this.ids[slot] = id;
    this.types[slot] = type;
    this.routers[slot] = routers;
    const bytes = Buffer.byteLength(json);
    if (bytes > MAX_IN_SEGMENT) {
      this.segmentOf[slot] = undefined;
      this.large.set(seq, json);
      return;
    }
    let segment = this.segments.at(-1);
    if (!segment || this.used + bytes > SEGMENT_BYTES) segment = this.nextSegment();
    segment.bytes.write(json, this.used, bytes, 'utf8');
    this.segmentOf[slot] = segment.bytes;
    this.start[slot] = this.used;
    this.length[slot] = bytes;
    this.used += bytes;
    segment.lastSeq = seq;
  }

  idOf(seq: number): number {
    return this.ids[seq % this.capacity]!;
  }

  /** The seq of the first event held whose id is above `id` (last + 1 when none is). */
  seqAfter(id: number): number {
    let low = this.first;
    let high = this.last + 1;
    while (low < high) {
      const mid = Math.floor((low + high) / 2);
      if (this.idOf(mid) > id) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  typeOf(seq: number): string {
    return this.types[seq % this.capacity]!;
  }

  routersOf(seq: number): EventRouters {
    return this.routers[seq % this.capacity];
  }

  /** The event's JSON text. */
  json(seq: number): string {
    const slot = seq % this.capacity;
    const segment = this.segmentOf[slot];
    if (!segment) return this.large.get(seq)!;
    return segment.toString('utf8', this.start[slot], this.start[slot]! + this.length[slot]!);
  }

  stats(): EventRingStats {
    return { events: this.last - this.first + 1, segmentBytes: this.segments.length * SEGMENT_BYTES, large: this.large.size };
  }

  /** Forgets the events up to `seq` included. */
  private drop(seq: number): void {
    for (let s = this.first; s <= seq; s++) {
      const slot = s % this.capacity;
      this.droppedId = this.ids[slot]!;
      if (!this.segmentOf[slot]) this.large.delete(s);
      this.segmentOf[slot] = undefined;
      this.routers[slot] = undefined;
    }
    this.first = Math.max(this.first, seq + 1);
  }

  /**
   * A segment to write on from its start: a new one while fewer than maxSegments exist and the oldest
   * still holds events, else the oldest, its events dropped first.
   */
  private nextSegment(): { bytes: Buffer; lastSeq: number } {
    const oldest = this.segments[0];
    let segment: { bytes: Buffer; lastSeq: number };
    if (oldest && this.segments.length > 1 && (oldest.lastSeq < this.first || this.segments.length >= this.maxSegments)) {
      this.segments.shift();
      if (oldest.lastSeq >= this.first) this.drop(oldest.lastSeq);
      segment = oldest;
    } else {
      segment = { bytes: Buffer.allocUnsafeSlow(SEGMENT_BYTES), lastSeq: 0 };
    }
    segment.lastSeq = 0;
    this.segments.push(segment);
    this.used = 0;
    return segment;
  }
}
