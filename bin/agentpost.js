#!/usr/bin/env node
// The `agentpost` command run from the TypeScript sources of a checkout (tests, examples, development), through tsx.
// The package's own `agentpost` command is the build, dist/server/cli.js (package.json `bin`; `npm start` runs it).
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
