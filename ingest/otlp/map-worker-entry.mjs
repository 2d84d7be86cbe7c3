// Bootstrap of an OTLP map thread: the TypeScript sources run through tsx, as in the main thread.
import { register } from 'tsx/esm/api';

register();
await import('./map-worker.ts');
