import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { lazy, Suspense, type ReactElement } from 'react';
import { createBrowserRouter, Link, Outlet } from 'react-router';
import { RouterProvider } from 'react-router/dom';
import { Loading } from '@/components/StateViews';
import { TokenSetting } from '@/components/TokenSetting';
import { CompareView } from '@/features/compare/components/CompareView';
import { ProjectPage } from '@/features/projects/components/ProjectPage';
import { ProjectsPage } from '@/features/projects/components/ProjectsPage';
import { RunPage } from '@/features/runs/components/RunPage';

function Layout(): ReactElement {
  return (
    <>
      <header className="top">
        <Link to="/" className="brand">
          Benchtrail
        </Link>
        <nav aria-label="Main">
          <Link to="/">Projects</Link>
        </nav>
        <TokenSetting />
      </header>
      <main>
        <Outlet />
      </main>
    </>
  );
}

function NotFound(): ReactElement {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        Runs live at <code>/r/&lt;run&gt;</code>, projects at <code>/p/&lt;project&gt;</code>. <Link to="/">See all projects</Link>.
      </p>
    </section>
  );
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: { queries: { staleTime: 30_000, retry: (count, err) => count < 2 && !(err instanceof Error && /^4\d\d /.test(err.message)) } },
  });
}

// The project overview's trend comes from the history feature; composed here, where features meet.
const OverheadTrend = lazy(() =>
  import('@/features/history/components/OverheadTrend').then((m) => ({ default: m.OverheadTrend })),
);

function ProjectOverview(): ReactElement {
  return (
    <ProjectPage
      overview={
        <Suspense fallback={<Loading what="the overhead trend" />}>
          <OverheadTrend />
        </Suspense>
      }
    />
  );
}

// Pages beyond the first visit are their own chunks, keeping the initial bundle small.
const router = createBrowserRouter([
  {
    element: <Layout />,
    HydrateFallback: () => null,
    children: [
      { path: '/', element: <ProjectsPage /> },
      { path: '/p/:slug', element: <ProjectOverview /> },
      {
        path: '/p/:slug/history',
        lazy: () => import('@/features/history/components/HistoryPage').then((m) => ({ Component: m.HistoryPage })),
      },
      {
        path: '/p/:slug/alerts',
        lazy: () => import('@/features/alerts/components/AlertsPage').then((m) => ({ Component: m.AlertsPage })),
      },
      {
        path: '/p/:slug/alerts/:alertId',
        lazy: () => import('@/features/alerts/components/AlertPage').then((m) => ({ Component: m.AlertPage })),
      },
      {
        path: '/p/:slug/plans',
        lazy: () => import('@/features/plans/components/PlansPage').then((m) => ({ Component: m.PlansPage })),
      },
      { path: '/r/:runSlug', element: <RunPage /> },
      { path: '/compare', element: <CompareView /> },
      {
        path: '/s/:snapshotSlug',
        lazy: () => import('@/features/snapshots/components/SnapshotPage').then((m) => ({ Component: m.SnapshotPage })),
      },
      { path: '*', element: <NotFound /> },
    ],
  },
]);

export function App({ queryClient }: { queryClient: QueryClient }): ReactElement {
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
