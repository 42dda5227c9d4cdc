// Feature folders own their logic and never import each other: a feature reaches shared code
// (components/, lib/, api/) only, and app.tsx composes features. Checked in `make test`.
import tseslint from 'typescript-eslint';

const FEATURES = ['alerts', 'compare', 'history', 'plans', 'projects', 'runs', 'snapshots'];

// Everywhere in the app: a feature's model (runModel, historyModel, …) sits in its feature folder,
// and test data (frontend/test, tests/) never enters the bundle.
const SHARED_PATTERNS = [
  {
    group: ['@/lib/*Model', '@/lib/*Model.ts', '**/lib/*Model', '**/lib/*Model.ts'],
    message: "a feature's model lives next to its components in src/features/<feature>/, not in shared lib/",
  },
];
const TEST_DATA = {
  group: ['**/test/**', '**/tests/**', '**/e2e/**'],
  message: 'test data stays in test folders: app code never imports it (only *.test.ts files may)',
};

const restrict = (...patterns) => ['error', { patterns: [...SHARED_PATTERNS, ...patterns] }];

const featureZones = FEATURES.map((feature) => ({
  files: [`src/features/${feature}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': restrict(TEST_DATA, {
      group: FEATURES.filter((f) => f !== feature).flatMap((f) => [
        `@/features/${f}`, `@/features/${f}/**`, `**/features/${f}/**`,
        `../${f}`, `../${f}/**`, `../../${f}`, `../../${f}/**`, `../../../${f}/**`,
      ]),
      message: `features never import each other: move what ${feature} needs to src/components or src/lib, or compose in app.tsx`,
    }),
  },
}));

// Every table is drawn by components/DataTable.tsx from a TableModel: headers, row headers, units,
// alignment and scrolling stay the same on every screen.
const TABLE_ELEMENTS = ['table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'caption', 'colgroup'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/api/schema.d.ts'] },
  {
    files: ['src/**/*.{ts,tsx}'],
    languageOptions: { parser: tseslint.parser },
    rules: {
      // Shared code never depends on a feature.
      'no-restricted-imports': restrict(TEST_DATA, { group: ['@/features/**'], message: 'shared code must not import a feature' }),
      'no-restricted-syntax': [
        'error',
        {
          selector: `JSXOpeningElement[name.name=/^(${TABLE_ELEMENTS.join('|')})$/]`,
          message: 'tables are drawn by DataTable (src/components/DataTable.tsx): build a TableModel, pass renderers for links or controls',
        },
      ],
    },
  },
  { files: ['src/components/DataTable.tsx'], rules: { 'no-restricted-syntax': 'off' } },
  ...featureZones,
  // Tests may read the recorded test data; they still never reach into another feature.
  {
    files: ['src/**/*.test.{ts,tsx}'],
    rules: { 'no-restricted-imports': restrict({ group: ['@/features/**'], message: 'a test checks its own feature or shared code' }) },
  },
  // The composition root: routes and cross-feature slots live here only.
  { files: ['src/app.tsx', 'src/main.tsx'], rules: { 'no-restricted-imports': restrict(TEST_DATA) } },
);
