/// <reference types="vitest/config" />
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  resolve: { alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) } },
  server: {
    // Dev only: the API runs separately (BENCHTRAIL_API_URL), the built app is served by the API itself.
    proxy: { '/api': process.env.BENCHTRAIL_API_URL ?? 'http://127.0.0.1:8400' },
  },
  build: {
    // Plotly is its own lazy chunk (~540 kB gzip); the initial bundle is budgeted separately.
    chunkSizeWarningLimit: 1800,
  },
  test: {
    include: ['src/**/*.test.{ts,tsx}'],
    environment: 'node',
  },
});
