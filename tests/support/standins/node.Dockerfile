# Stand-in for node:20-bookworm-slim: the test machine's own Node 20 and npm (Debian's nodejs 18 is too old
# for Vite 8), copied into the Debian base.
ARG BASE
FROM ${BASE}
COPY node /usr/local/bin/node
COPY npm/ /usr/local/lib/node_modules/npm/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && node --version && npm --version
CMD ["node"]
