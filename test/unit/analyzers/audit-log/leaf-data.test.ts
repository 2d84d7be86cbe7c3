/**
 * A leaf's data written and read back in JavaScript, for a kind with an optional field (a model
 * turn's messages): NULL there leaves the data exactly what a turn's was before the field existed
 * (the oracle: the v1 lines written out by hand), a text adds one more line, and both read back.
 */
import { describe, expect, it } from 'vitest';
import { leafDataOf, leafKey, parseLeafData } from '../../../../analyzers/audit-log/leaf-data.ts';
import { leafFields, leafRequired } from '../../../../analyzers/audit-log/leaf-sql.ts';

describe('leaf data with an optional field', () => {
  const required = leafRequired('model_turn');
  const texts = leafFields('model_turn').map((f, i) => (i >= required ? null : f === 'provider' ? null : `${f}-é`));

  it('leaves the field out when NULL: the data a turn had before the field', () => {
    const byHand = `tool-audit leaf v1 model_turn\n${leafFields('model_turn')
      .slice(0, required)
      .map((f) => (f === 'provider' ? '-\n' : `${Buffer.byteLength(`${f}-é`)}:${f}-é\n`))
      .join('')}`;
    expect(leafFields('model_turn')[required]).toBe('messages');
    expect(leafDataOf('model_turn', texts)).toBe(byHand);
    const parsed = parseLeafData(byHand);
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(parsed.fields.get('messages')).toBeNull();
    expect(parsed.fields.get('provider')).toBeNull();
    expect(leafKey('model_turn', parsed.fields)).toBe('turn_id-é');
  });

  it('writes it last when set, and reads it back; anything after it is refused', () => {
    const data = leafDataOf('model_turn', [...texts.slice(0, required), '{"a":"\n"}']);
    expect(data.endsWith('9:{"a":"\n"}\n')).toBe(true);
    const parsed = parseLeafData(data);
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(parsed.fields.get('messages')).toBe('{"a":"\n"}');
    expect(parseLeafData(`${data}1:x\n`)).toBe('the data goes on after its last field');
  });

  it('kinds without one are unchanged: every field always written', () => {
    expect(leafRequired('tool_call')).toBe(leafFields('tool_call').length);
    expect(leafDataOf('agent_run', leafFields('agent_run').map(() => null))).toBe(`tool-audit leaf v1 agent_run\n${'-\n'.repeat(leafFields('agent_run').length)}`);
  });
});
