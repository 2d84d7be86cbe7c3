// Bootstrap of the budget thread: the TypeScript sources run through tsx, as in the main thread.
import { register } from 'tsx/esm/api';

register();
await import('./thread-worker.ts');
