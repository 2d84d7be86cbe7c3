/**
 * How MCP answers become tool_call outcomes and output artifacts: text, structured content,
 * images by hash and size (their bytes hashed here independently), isError, JSON-RPC errors.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cancelOutcome, errorOutcome, resultOutcome } from '../../../../emit/mcp/call-outcome.ts';

describe('resultOutcome', () => {
  it('text blocks are a text artifact; no content is no artifact', () => {
    expect(resultOutcome({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toMatchObject({ status: 'success', error: null, content: { text: 'a\nb', contentType: 'text', embed: false }, resultSummary: { mcp_content_blocks: 2, mcp_content_types: { text: 2 }, text_chars: 2, structured: false } });
    expect(resultOutcome({ content: [] }).content).toBeUndefined();
    expect(resultOutcome(undefined)).toMatchObject({ status: 'success', content: undefined });
  });

  it('structured content is the json artifact', () => {
    const o = resultOutcome({ content: [{ type: 'text', text: '{"t":1}' }], structuredContent: { t: 1 } });
    expect(o.content).toEqual({ text: '{"t":1}', contentType: 'json', embed: true });
  });

  it('images and blobs are kept by sha256 and size, not bytes', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const o = resultOutcome({ content: [{ type: 'text', text: 'see' }, { type: 'image', mimeType: 'image/png', data: png.toString('base64') }, { type: 'resource', resource: { uri: 'file:///x', blob: png.toString('base64') } }] });
    const sha = createHash('sha256').update(png).digest('hex');
    expect(JSON.parse(o.content?.text ?? '')).toEqual([
      { type: 'text', text: 'see' },
      { type: 'image', mimeType: 'image/png', sha256: sha, size_bytes: 7 },
      { type: 'resource', resource: { uri: 'file:///x', sha256: sha, size_bytes: 7 } },
    ]);
  });

  it('isError is an error with the text as message and no artifact', () => {
    expect(resultOutcome({ isError: true, content: [{ type: 'text', text: 'no such file' }] })).toMatchObject({ status: 'error', error: 'no such file', content: undefined });
    expect(resultOutcome({ isError: true, content: [] }).error).toMatch(/isError/);
  });
});

describe('errorOutcome and cancelOutcome', () => {
  it('maps JSON-RPC codes', () => {
    expect(errorOutcome({ code: -32602, message: 'bad args' })).toMatchObject({ status: 'invalid_input', error: 'JSON-RPC error -32602: bad args' });
    expect(errorOutcome({ code: -32001, message: 'Request timed out' }).status).toBe('timeout');
    expect(errorOutcome({ code: -32603, message: 'internal' }).status).toBe('error');
    expect(errorOutcome('garbage')).toMatchObject({ status: 'error', error: 'JSON-RPC error ?: JSON-RPC error' });
  });

  it('a cancellation naming a timeout is a timeout', () => {
    expect(cancelOutcome('Request timed out').status).toBe('timeout');
    expect(cancelOutcome(undefined)).toMatchObject({ status: 'error', error: 'cancelled by the client: no reason given' });
  });

  it('long errors are clipped', () => {
    expect(errorOutcome({ code: 1, message: 'x'.repeat(10_000) }).error?.length).toBeLessThan(4_100);
  });
});
