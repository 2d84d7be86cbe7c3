#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx (no build step to forget), registered in this
// process so the server is this one process. package.json's scripts `exec` this file: npm forwards
// SIGTERM/SIGINT only to its direct child, and Debian's /bin/sh (dash) neither execs a script's
// last command nor forwards signals, so without `exec` a SIGTERM to npm left the server running.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
