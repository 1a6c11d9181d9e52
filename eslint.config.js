import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'data/', 'scratch/', 'clients/*/dist/', 'clients/typescript/src/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The per-execution path. On Node 20 (V8 11.3) an object literal that spreads a non-empty
    // object and then adds keys is ~40x slower than a plain literal and its objects survive the
    // young generation (see src/engine/step-rows.ts): list the keys, or Object.assign onto a
    // fresh literal where the keys are the service's own.
    files: ['src/engine/**/*.ts', 'src/webhooks/**/*.ts', 'src/steps/**/*.ts', 'src/db/**/*.ts'],
    ignores: ['**/*.test.ts', 'src/db/migrations/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ObjectExpression > SpreadElement ~ Property', message: 'Spread followed by more keys is slow on Node 20 and its objects survive scavenges: list the keys, or Object.assign onto a fresh literal.' },
        { selector: 'ObjectExpression > SpreadElement ~ SpreadElement', message: 'Two spreads in one literal are slow on Node 20 and their objects survive scavenges: use Object.assign onto a fresh literal.' },
      ],
    },
  },
  {
    files: ['**/*.mjs', 'scripts/**', 'bench/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly' } },
  },
);
