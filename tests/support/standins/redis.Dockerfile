# Stand-in for redis:7-bookworm: Debian's Redis 7, run as user and group redis (999, as in the official image)
# with /data its working folder.
ARG BASE
FROM ${BASE}
RUN groupadd --system --gid 999 redis && useradd --system --uid 999 --gid redis --home-dir /data redis \
    && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        redis-server redis-tools >/dev/null && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data && chown redis:redis /data
COPY redis-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /data
WORKDIR /data
ENTRYPOINT ["docker-entrypoint.sh"]
EXPOSE 6379
CMD ["redis-server"]
