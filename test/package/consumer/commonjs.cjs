// A CommonJS consumer (what `npm init -y` makes): `require('agentpost')` throws an error that says the package is
// ESM only and shows the `import()` line; that line then works. Prints one JSON line of what it saw.
'use strict';
const assert = require('node:assert/strict');

const refused = {};
for (const entry of ['agentpost', 'agentpost/ai', 'agentpost/mcp', 'agentpost/server', 'agentpost/storage']) {
  try {
    require(entry);
    refused[entry] = 'loaded';
  } catch (error) {
    refused[entry] = { code: error.code, message: error.message };
  }
}
import('agentpost').then((agentpost) => {
  assert.equal(typeof agentpost.createAgentpost, 'function');
  process.stdout.write(`${JSON.stringify({ refused, imported: Object.keys(agentpost).length })}\n`);
});
