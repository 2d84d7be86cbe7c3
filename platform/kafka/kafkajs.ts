/**
 * kafkajs, loaded on first use rather than at import. The emitter package lists kafkajs as an
 * optional peer: an orchestrator that only POSTs to a server imports the emitter without it,
 * so no module on the emitter's import path may load kafkajs eagerly. kafkajs is CommonJS,
 * so a synchronous require keeps createKafkaTransport synchronous.
 */
import { createRequire } from 'node:module';
import type * as KafkaJsModule from 'kafkajs';
import { AppError } from '../errors.ts';

type KafkaJs = typeof KafkaJsModule;

let loaded: KafkaJs | undefined;

/** The kafkajs module; throws an AppError (CONFIG_INVALID) saying what to install when it is missing. */
export function kafkajs(): KafkaJs {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)('kafkajs') as KafkaJs;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw err;
    throw new AppError('CONFIG_INVALID', 'the Kafka transport needs the kafkajs package: npm install kafkajs', { retryable: false, cause: err });
  }
  return loaded;
}
