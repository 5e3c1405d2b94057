// ESLint flat config: @eslint/js recommended plus typescript-eslint's type-aware recommended set (recommendedTypeChecked)
// over every TypeScript file the project's tsconfig.json covers, products and tests alike: the type information comes
// from tsconfig.json through the project service. Files outside that project (this config, bin/, scripts/, the package
// consumer fixtures under test/package/consumer, which import the built package) get the non-type-checked recommended
// set. Formatting is prettier's business (`prettier --check .` in `npm run lint`), so no stylistic rules here.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/', 'coverage/', 'node_modules/', 'storage/migrations/', 'data/', '.scratch/'],
  },
  js.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Protocol code matches control characters on purpose (header, filename and URL sanitising, MIME parsing).
      'no-control-regex': 'off',
      // A binding that a callback reads before its one assignment (a timer, a loop that stops itself) is declared first.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A leading underscore marks a binding that is unused on purpose (a parameter an interface requires, a field
      // dropped from an object by destructuring it out of a rest spread).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Ports and adapters: an implementation of an async interface (a notifier's send, a transport's close, a fake
      // model's generate) may have nothing to await, and `async` is what keeps its throw a rejection, as the interface
      // promises. A forgotten await, the mistake this rule is after, is caught by no-floating-promises.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests and benchmarks: the type-aware set stays on (floating promises, thenables, stringification), less the rules
    // that fight how tests are written.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'vitest.config.ts'],
    rules: {
      // Tests read untyped JSON (HTTP responses, webhook bodies, tool results) and assert on it with expect(); the
      // assertions are the check, and a declared type for every response would only restate them. A helper that returns
      // such JSON says `any`, as Response.json() does.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // expect(fake.method).toHaveBeenCalled() and handing methods of fakes around are the vitest idiom.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Not in tsconfig.json: linted without type information.
    files: ['scripts/**/*.ts', 'test/package/consumer/**/*.ts'],
    extends: [tseslint.configs.disableTypeChecked, tseslint.configs.recommended],
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
