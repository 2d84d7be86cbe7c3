/**
 * Compile-time checks (tsc reads this file; the runtime assertions are trivial) that the
 * emitter's zod-free types still agree with the zod contracts the server validates with.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { WireInvocation } from '../../../emit/packets.ts';
import type { ContentType as ZodContentType } from '../../../schemas/tool-output.ts';
import type { ToolInvocation, Orchestrator as ZodOrchestrator, ToolStatus as ZodToolStatus } from '../../../schemas/tool-invocation.ts';
import type { ContentType, Orchestrator, ToolStatus } from '../../../schemas/vocabulary.ts';

describe('emitter types vs the zod contracts', () => {
  it('a built invocation is a ToolInvocation', () => {
    expectTypeOf<WireInvocation>().toExtend<ToolInvocation>();
  });

  it('the vocabularies are the contracts’ enums', () => {
    expectTypeOf<Orchestrator>().toEqualTypeOf<ZodOrchestrator>();
    expectTypeOf<ToolStatus>().toEqualTypeOf<ZodToolStatus>();
    expectTypeOf<ContentType>().toEqualTypeOf<ZodContentType>();
  });
});
