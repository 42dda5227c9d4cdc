import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import { createBrowserRouter, Link, Outlet, RouterProvider } from 'react-router';
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

const router = createBrowserRouter([
  {
    element: <Layout />,
    children: [
      { path: '/', element: <ProjectsPage /> },
      { path: '/p/:slug', element: <ProjectPage /> },
      { path: '/r/:runSlug', element: <RunPage /> },
      { path: '/compare', element: <CompareView /> },
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
