/**
 * Opaque page cursors: the sort key of the last row of a page, tagged with the list it belongs
 * to, as base64url JSON. A cursor carries no filter, so a client must repeat the same query
 * parameters with it; one from another list, or tampered with, is refused (400).
 */
import { z } from 'zod';
import { badRequest } from '../platform/errors.ts';

const MAX_CURSOR_CHARS = 2048;

/** Encodes and decodes the cursors of one list. */
export interface CursorCodec<K extends unknown[]> {
  encode(key: K): string;
  /** The sort key of a cursor; throws a `BAD_REQUEST` AppError when it is not one of this list's. */
  decode(cursor: string): K;
}

/** A cursor codec for list `tag` whose sort key matches `shape`. */
export function cursorCodec<S extends z.ZodTuple>(tag: string, shape: S): CursorCodec<z.infer<S> & unknown[]> {
  const envelope = z.tuple([z.literal(tag), shape]);
  return {
    encode: (key) => Buffer.from(JSON.stringify([tag, key]), 'utf8').toString('base64url'),
    decode: (cursor) => {
      if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw badRequest('cursor is malformed');
      let raw: unknown;
      try {
        raw = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      } catch {
        throw badRequest('cursor is malformed');
      }
      const parsed = envelope.safeParse(raw);
      if (!parsed.success) throw badRequest(`cursor does not belong to this list (${tag})`);
      return parsed.data[1] as z.infer<S> & unknown[];
    },
  };
}

/** Sort-key element: epoch milliseconds. */
export const msKey = z.number().int().min(0).max(7_258_118_400_000);
/** Sort-key element: a UUID. */
export const uuidKey = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
/** Sort-key element: a non-negative count or amount. */
export const numKey = z.number().finite().min(0);
/** Sort-key element: a bounded string. */
export const strKey = z.string().max(512);
