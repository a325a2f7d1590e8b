import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

// Architecture rules (see the README's layout):
// - src/worker never imports src/main: workers load nothing of the main thread.
// - src/main imports from src/worker only types, plus the runtime modules meant to be shared:
//   the pure store, render and template code the inline executor runs, and the comlink channel.
// - only cli/ imports tools/ (dev tooling stays out of the package API).
// - no import cycles anywhere.
const SHARED_WORKER_RUNTIME = [
  'store/indexed-store',
  'store/object-guard',
  'render/renderer',
  'render/text-window',
  'render/sha256',
  'render/status-patch',
  'templates/template-engine',
  'channel/comlink-node',
];

const workerFromMain = {
  regex: `^(\\.\\./)+worker/(?!(${SHARED_WORKER_RUNTIME.join('|')})\\.js$)`,
  allowTypeImports: true,
  message: 'src/main may import only types from src/worker, apart from the shared runtime modules named in eslint.config.js.',
};
const toolsOutsideCli = {
  regex: '^(\\.\\./)+tools/|^\\./tools/',
  message: 'Only src/main/cli imports src/main/tools (dev tooling is not part of the engine or its API).',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**', 'out/**', '.scratch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    settings: {
      // Dependencies are parsed as TypeScript and resolved the way tsc resolves them (`.js` -> `.ts`).
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['src/worker/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(\\.\\./)+main/', message: 'src/worker never imports src/main: workers load nothing of the main thread.' }] },
      ],
    },
  },
  {
    files: ['src/main/**/*.ts'],
    ignores: ['src/main/cli/**', 'src/main/tools/**'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [workerFromMain, toolsOutsideCli] }] },
  },
  {
    files: ['src/main/cli/**/*.ts', 'src/main/tools/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [workerFromMain] }] },
  },
);
