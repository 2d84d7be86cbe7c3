#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx (no build step to forget).
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
