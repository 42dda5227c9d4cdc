// Feature folders own their logic and never import each other: a feature reaches shared code
// (components/, lib/, api/) only, and app.tsx composes features. Checked in `make test`.
import tseslint from 'typescript-eslint';

const FEATURES = ['alerts', 'compare', 'history', 'plans', 'projects', 'runs', 'snapshots'];

const featureZones = FEATURES.map((feature) => ({
  files: [`src/features/${feature}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: FEATURES.filter((f) => f !== feature).flatMap((f) => [
              `@/features/${f}`, `@/features/${f}/**`, `**/features/${f}/**`,
              `../${f}`, `../${f}/**`, `../../${f}`, `../../${f}/**`, `../../../${f}/**`,
            ]),
            message: `features never import each other: move what ${feature} needs to src/components or src/lib, or compose in app.tsx`,
          },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/api/schema.d.ts'] },
  {
    files: ['src/**/*.{ts,tsx}'],
    languageOptions: { parser: tseslint.parser },
    rules: {
      // Shared code never depends on a feature.
      'no-restricted-imports': ['error', { patterns: [{ group: ['@/features/**'], message: 'shared code must not import a feature' }] }],
    },
  },
  ...featureZones,
  // The composition root: routes and cross-feature slots live here only.
  { files: ['src/app.tsx', 'src/main.tsx'], rules: { 'no-restricted-imports': 'off' } },
);
