#!/bin/sh
# The official redis image's entrypoint, the part the compose stack relies on: redis-server started as root
# runs as the redis user; any other command runs as given.
set -e
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ] && [ "$(id -u)" = 0 ]; then
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
fi
exec "$@"
