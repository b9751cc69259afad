import tseslint from 'typescript-eslint';

/**
 * Limits, as errors, in the codebase's own terms:
 * - 300 lines per file (blank lines and comments not counted): STYLE.md's "no file over about 300 lines"; the
 *   largest source files (class watchers, metrics) sit near it, and a file past it holds two concerns.
 * - complexity 15: the branchiest functions here (the claim loop, the watch failure handler) read as one
 *   decision table at about that; past it they stop fitting on a screen.
 * - depth 4: a rule check, inside a loop over kinds, inside a try, inside a function is as deep as any needs.
 * - 5 parameters: a constructor with its dependencies injected for tests (clock, limits, counters) takes 5;
 *   more is an options object.
 * Tests get 600 lines: a table-driven test file holds its table's cases next to each other.
 */
export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.tap/', 'coverage/', 'src/schemas/types.ts', 'src/schemas/validators.generated.ts'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      // `const { dropped, ...kept } = object` is how a key is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': [
        'error',
        // tap queues each subtest and awaits it itself (its docs call t.test without await).
        { allowForKnownSafeCalls: [{ from: 'package', name: ['test', 'skip', 'todo'], package: '@tapjs/test' }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      'max-depth': ['error', 4],
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
      'max-params': ['error', 5],
      complexity: ['error', 15],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 600, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
  },
);
