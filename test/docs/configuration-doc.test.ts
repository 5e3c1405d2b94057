/**
 * docs/configuration.md is generated from src/config.ts (the schema) and src/config-docs.ts (SETTING_DOCS) by scripts/gen-config-docs.ts.
 * It fails when a setting has no words, or when the committed page is not what the generator writes now.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_DOC, renderConfigurationDoc } from '../../scripts/gen-config-docs.js';
import { SETTING_NAMES } from '../../src/config.js';
import { SETTING_DOCS, SETTING_GROUPS, settingsMetadata } from '../../src/config-docs.js';

const committed = readFileSync(CONFIGURATION_DOC, 'utf8');

describe('docs/configuration.md', () => {
  it('is what npm run docs:config writes from src/config.ts', () => {
    expect(committed, 'docs/configuration.md is stale: run npm run docs:config').toBe(renderConfigurationDoc());
  });

  it('has an entry for every variable the schema knows', () => {
    const missing = SETTING_NAMES.filter((name) => !committed.includes(`### \`${name}\`\n`));
    expect(missing, 'settings missing from docs/configuration.md: run npm run docs:config').toEqual([]);
  });

  it('describes every setting of the schema, and only those', () => {
    expect(Object.keys(SETTING_DOCS).sort()).toEqual([...SETTING_NAMES].sort());
    for (const setting of settingsMetadata()) {
      expect(setting.description.trim(), setting.name).not.toBe('');
      expect(SETTING_GROUPS, setting.name).toContain(setting.group);
    }
  });

  it('takes each default from one place: the schema, or the words when the schema has none', () => {
    expect(() => settingsMetadata()).not.toThrow();
    const metadata = settingsMetadata();
    expect(metadata.find((setting) => setting.name === 'AGENTPOST_HTTP_PORT')).toMatchObject({
      default: '`3000`',
      values: 'a port, 0 to 65535',
    });
    expect(metadata.find((setting) => setting.name === 'AGENTPOST_LOG_LEVEL')?.values).toBe(
      '`debug`, `info`, `warn`, `error`, `silent`',
    );
    expect(metadata.find((setting) => setting.name === 'AGENTPOST_PUBLIC_URL')?.default).toBe(
      '`http://HOST:HTTP_PORT`',
    );
  });
});
