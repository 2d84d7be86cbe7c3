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
  it('takes a pretty-printed single packet object as one packet, exactly as sent, and refuses a broken one whole', () => {
    const pretty = JSON.stringify({ type: 'tool_call', invocation: { call_id: 'x', args: { a: 1.0 } } }, null, 2);
    expect(pretty.split('\n').length).toBeGreaterThan(5);
    expect(splitPacketBody(pretty)).toEqual({ ok: true, packets: [pretty] });
    expect(splitPacketBody(pretty.slice(0, -1))).toMatchObject({ ok: false, error: expect.stringContaining('pretty-printed') });
    // One compact object is also one packet, and NDJSON stays lines.
    expect(splitPacketBody('{"a":1}')).toEqual({ ok: true, packets: ['{"a":1}'] });
    expect(splitPacketBody('{"a":1}\n{"b":2}')).toEqual({ ok: true, packets: ['{"a":1}', '{"b":2}'] });
  });
});
