// `require('agentpost')` (and its subpaths) from CommonJS: Agentpost is published as ES modules only. This file is
// the package's `require` condition, so that such a project gets this explanation instead of Node's
// "No "exports" main defined".
'use strict';
const error = new Error(
  "agentpost is an ES module package (ESM only): require('agentpost') cannot load it.\n" +
    'From CommonJS, load it with a dynamic import:\n\n' +
    "  const { createAgentpost } = await import('agentpost');\n\n" +
    '(or import(\'agentpost/ai\'), import(\'agentpost/mcp\'), …), or make your project ESM ("type": "module" in package.json).',
);
error.code = 'ERR_AGENTPOST_ESM_ONLY';
throw error;
