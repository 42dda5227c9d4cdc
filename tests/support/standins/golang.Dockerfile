# Stand-in for golang:1-bookworm: the test machine's Go toolchain (/usr/local/go) in the Debian base, laid out
# as in the official image.
ARG BASE
FROM ${BASE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        git gcc libc6-dev >/dev/null && rm -rf /var/lib/apt/lists/*
COPY go/ /usr/local/go/
ENV GOPATH=/go GOTOOLCHAIN=local PATH=/go/bin:/usr/local/go/bin:$PATH
RUN mkdir -p /go/bin && go version
