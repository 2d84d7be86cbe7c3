import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstInvalidUtf8, splitPacketBody } from '../../../api/packet-body.ts';

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

describe('firstInvalidUtf8', () => {
  it('finds where bytes stop being UTF-8, as Node judges UTF-8 (isUtf8)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), fc.string({ unit: 'binary', maxLength: 8 }), (junk, text) => {
        const bytes = Buffer.concat([Buffer.from(text, 'utf8'), junk]);
        const at = firstInvalidUtf8(bytes);
        expect(at === bytes.length).toBe(isUtf8(bytes));
        // Everything before it is UTF-8; a lone invalid byte at `at` would still be invalid.
        expect(isUtf8(bytes.subarray(0, at))).toBe(true);
        if (at < bytes.length) expect(isUtf8(bytes.subarray(0, at + 4))).toBe(false);
      }),
      { numRuns: 500 },
    );
    expect(firstInvalidUtf8(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x22]))).toBe(3);
    expect(firstInvalidUtf8(Buffer.from('é€𝄞'))).toBe(9);
  });
});
