#!/usr/bin/env node
// Entry of the `agentpost` command: loads the TypeScript sources through tsx, then runs the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
