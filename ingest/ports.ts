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

/** A packet as received: its exact bytes (as text) and origin. */
export interface RawPacket {
  raw: string;
  /** Byte length of the packet as sent (UTF-8); larger than raw when the edge truncated it. */
  bytes?: number;
  source: PacketSource;
  /** The HTTP request that brought the packet in, when it travelled on through Kafka. */
  requestId?: string;
  /** The packet's UTF-8 bytes, when the transport holds them (decode threads copy these, not raw). */
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

/** Fingerprint of tool_workflows rows written by the dependency analyzer (not from a packet). */
export const ANALYZER_FINGERPRINT = 'analyzer'.padEnd(32, '0');
