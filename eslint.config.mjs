// @ts-check
// ESLint with typescript-eslint's recommended rules, as NestJS projects ship it; formatting is Prettier's
// (eslint-config-prettier turns off the rules that would fight it). `npm run lint` runs both, with zero warnings.
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', '.local/', 'coverage/', 'node_modules/', '**/*.generated.ts'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // The launchers are CommonJS that runs before `npm ci`: require() is how they load each other.
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
