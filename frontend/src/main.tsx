import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { configureApi } from '@/api/client';
import { App, createQueryClient } from './app';
import { parseEnv } from './lib/env';
import './styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html lacks #root');
try {
  configureApi(parseEnv(import.meta.env).apiBaseUrl);
  createRoot(root).render(
    <StrictMode>
      <App queryClient={createQueryClient()} />
    </StrictMode>,
  );
} catch (err) {
  root.textContent = `Benchtrail cannot start: ${err instanceof Error ? err.message : String(err)}`;
  throw err;
}
