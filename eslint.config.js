// `npm run lint`: ESLint's and typescript-eslint's recommended rules, with type information, over the
// TypeScript of src/, test/, bench/, examples/ and scripts/, and ESLint's recommended rules over the
// plain JavaScript of scripts/ and packages/. Each TypeScript file is typed by its nearest tsconfig.json
// (projectService), so test/browser and examples/browser-demo get their DOM library.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['**/dist/', '**/generated/', 'drizzle/', 'coverage/', '.data/', '.tmp/', '.test-server-*/']),
  {
    files: ['{src,test,bench,examples,scripts}/**/*.{ts,tsx,mts,cts}'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A leading underscore marks a binding kept on purpose (`for (const _ of s)`), and a rest
      // sibling drops a key from a copy (`const { $schema: _ignored, ...rest } = doc`).
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A caught error or a rejection is `unknown`; passing it on unchanged (`reject(error)`) is right.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    // Node scripts in plain JavaScript (ES modules): no type information, so the rules that need none.
    files: ['{scripts,packages}/**/*.{js,mjs}'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'module', globals: { console: 'readonly', process: 'readonly', URL: 'readonly' } },
  },
  {
    // Tests and benchmarks read HTTP replies as untyped JSON (`Reply<T = any>`, `res.json()`) and then
    // assert on their values; typing every reply would restate the contract they are checking.
    files: ['{test,bench}/**/*.{ts,tsx,mts,cts}'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
