import { describe, expect, it } from 'vitest';
import { splitPacketBody } from '../../../api/packet-body.ts';

describe('POST body splitting keeps each packet exact', () => {
  it('splits a JSON array into the raw text of its elements', () => {
    const r = splitPacketBody('[ {"a": 1.0, "s": "x]y,\\"z"} , {"b":[1,2]} ]');
    expect(r).toEqual({ ok: true, packets: ['{"a": 1.0, "s": "x]y,\\"z"}', '{"b":[1,2]}'] });
  });
  it('splits NDJSON into lines and keeps malformed lines as packets (judged later)', () => {
    expect(splitPacketBody('{"a":1}\n\n{"b":\n')).toEqual({ ok: true, packets: ['{"a":1}', '{"b":'] });
  });
  it.each(['', '[{"a":1}', '[1,]', 'hello', '[{"a":1}] trailing'])('rejects malformed body %j', (body) => {
    expect(splitPacketBody(body).ok).toBe(false);
  });
});
