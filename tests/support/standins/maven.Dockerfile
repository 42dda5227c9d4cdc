# Stand-in for maven:3.9-eclipse-temurin-17: Debian's OpenJDK 17 and Maven.
ARG BASE
FROM ${BASE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        openjdk-17-jdk-headless maven >/dev/null && rm -rf /var/lib/apt/lists/* && mvn --version
ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
CMD ["mvn"]
