/**
 * What the ingest stage offers the stages after it (analyzers, api, cli): the packet as a
 * transport hands it over, the verdict on it, and the port HTTP ingest submits to. Types and
 * constants only, so a later stage depends on this file and not on ingest's internals.
 */
import type { PacketType } from '../schemas/packets.ts';

/** Where a packet came from, for quarantine records and replay. */
export type PacketSource =
  | { kind: 'kafka'; topic: string; partition: number; offset: string }
  | { kind: 'http'; requestId: string; index: number };

/**
 * How a packet's `raw` holds its bytes: `utf8` (the default) = the bytes are valid UTF-8 and
 * `raw` is their text; `base64` = the bytes are not UTF-8 (only a Kafka record can be) and `raw`
 * is their base64; `none` = a Kafka record without a value (null), `raw` is ''. Only `utf8`
 * packets can pass: the others are rejected (`invalid_utf8`, `malformed_json`), never decoded
 * with replacement characters.
 */
export type RawEncoding = 'utf8' | 'base64' | 'none';

/**
 * Marks a packet as the replay of a quarantined one (POST /v1/quarantine/replay): its outcome is
 * recorded in `quarantine_replays` by the pipeline that judged it, and a rejection is answered
 * but never quarantined a second time (the quarantine row stays the record of the packet).
 */
export interface ReplayTag {
  /** The quarantine row replayed (its source_key). */
  quarantineId: string;
  /** One replay request. */
  replayId: string;
  /** Which API key asked: a hash prefix, never the key. */
  keyId: string;
  /** True when the packet is the producer's corrected packet, not the stored bytes. */
  corrected: boolean;
}

/** A packet as received: its exact bytes (as text, see {@link RawEncoding}) and origin. */
export interface RawPacket {
  raw: string;
  /** How `raw` holds the bytes; absent = utf8. */
  encoding?: RawEncoding;
  /** Present when the packet replays a quarantined one. */
  replay?: ReplayTag;
  /** Byte length of the packet as sent (UTF-8); larger than raw when the edge truncated it. */
  bytes?: number;
  source: PacketSource;
  /** The HTTP request that brought the packet in, when it travelled on through Kafka. */
  requestId?: string;
  /**
   * The packet's UTF-8 bytes (the text of `raw`, never its base64), when the transport holds them:
   * decode threads and quarantine records take these as they are, not `raw`.
   */
  rawBytes?: Uint8Array;
}

/** What happened to one packet of a batch. */
export interface PacketOutcome {
  status: 'accepted' | 'duplicate' | 'rejected';
  packetType: PacketType | null;
  ids: string[];
  reason?: { code: string; message: string };
}

/** Where HTTP packets go: straight to the segment writer, or to Kafka. Durable when resolved. */
export interface PacketIngest {
  submit(packets: RawPacket[]): Promise<PacketOutcome[]>;
}

/**
 * A fingerprint as stored: the first 16 hex digits (64 bits) of the
 * SHA-256 that tells a redelivery from a reuse, then 16 zeros, in the FixedString(32) columns that
 * held all 32 — ZSTD stores the zeros in next to nothing (10 M calls: −28 bytes per call over five
 * tables; measured 8.8 against 16 bytes a value). Two different packets under one key then pass
 * for one with odds of 2^-64. Rows stored before keep their 32 digits: every read of a stored
 * fingerprint for I1 goes through {@link STORED_FINGERPRINT_SQL}, which brings both to this form.
 */
export const FINGERPRINT_DIGITS = 16;
const FINGERPRINT_PAD = '0'.repeat(32 - FINGERPRINT_DIGITS);

/** The stored form of a fingerprint from a hex digest (at least 16 digits). */
export const storedFingerprint = (hexDigest: string): string => hexDigest.slice(0, FINGERPRINT_DIGITS) + FINGERPRINT_PAD;

/** SQL of a row's `fingerprint` column in its stored form, whichever version wrote it. */
export const STORED_FINGERPRINT_SQL = `concat(substring(fingerprint, 1, ${FINGERPRINT_DIGITS}), '${FINGERPRINT_PAD}')`;

/** Fingerprint of tool_workflows rows written by the dependency analyzer (not from a packet); already in stored form. */
export const ANALYZER_FINGERPRINT = storedFingerprint('analyzer'.padEnd(32, '0'));

/** A tool call or model turn the writer has just made durable (what budgets count). */
export interface StoredCall {
  call_id: string;
  agent_id: string;
  tool_id: string;
  /** '' = no task. */
  task_id: string;
  cost_usd: number | null;
  created_at_ms: number;
  /** A model turn (its turn_id as call_id, tool_id ''); absent: a tool call. */
  kind?: 'model';
}

/**
 * Told, after each commit round, of the tool_invocations and model_turns rows it wrote (not
 * redeliveries). Called synchronously on the writer's path: it must be cheap and must not throw
 * (budgets add to in-memory totals). The process that owns the writer wires it (cli/serve.ts).
 */
export type CallsStoredListener = (calls: StoredCall[]) => void;
