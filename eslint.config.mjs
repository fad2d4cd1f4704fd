// The linter, configured once: `npm run lint` (test/unit/lint.test.ts runs it in `npm test`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'test/out/**', '.cache/**', 'node_modules/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      // A leading underscore names what a destructuring leaves out on purpose (a Secret's data, a stale field).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // The product matches control characters on purpose: it strips them from untrusted text before a terminal sees it.
      'no-control-regex': 'off',
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      // An empty case that carries a comment still only groups its labels.
      'no-fallthrough': ['error', { allowEmptyCase: true }],
    },
  },
  {
    // Tests read protocol and API answers as loose JSON.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
