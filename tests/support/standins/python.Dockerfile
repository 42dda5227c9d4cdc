# Stand-in for python:3.11-slim-bookworm (no image registry is reachable on the test machines): Debian's
# Python 3.11 with the official image's interface (`python` and `pip` on PATH, pip allowed to install).
ARG BASE
FROM ${BASE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        python3 python3-pip python3-venv >/dev/null \
    && rm -rf /var/lib/apt/lists/* /usr/lib/python3.11/EXTERNALLY-MANAGED \
    && ln -sf python3 /usr/bin/python && ln -sf pip3 /usr/bin/pip
CMD ["python3"]
