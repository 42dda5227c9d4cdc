"""A private Docker engine for the container tests, and the stand-in base images the Dockerfiles build on.

The engine: Debian's `dockerd` (apt-get install docker.io; `infra/scripts/bootstrap.sh --docker`), started and
stopped by the test, listening on a unix socket of its own, with no bridge network and no iptables rules
(containers use the host's network, on loopback). Its data root lives OUTSIDE the clone, in
BENCHTRAIL_DOCKER_CACHE (default /var/cache/benchtrail-test-docker), so that the next run on the machine finds
its images and build cache and rebuilds only what changed. A file lock there keeps two test sessions from
sharing one data root at a time; a daemon a killed session left behind (its pid file) is stopped first.

The stand-ins: no image registry is reachable from the test machines, so the official base images the
Dockerfiles name by default cannot be pulled. The test builds look-alikes from Debian's packages
(`debootstrap --variant=minbase bookworm`, imported once, then tests/support/standins/*.Dockerfile on top) and
passes them as the Dockerfiles' base-image build arguments and the compose file's image settings. Each
stand-in is rebuilt only when its recipe (Dockerfile, scripts, the host files it copies) changes.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from infra.localstack import wait_until

CACHE = Path(os.environ.get("BENCHTRAIL_DOCKER_CACHE", "/var/cache/benchtrail-test-docker"))
STANDINS = Path(__file__).resolve().parent / "standins"
DEBIAN_MIRROR = os.environ.get("BENCHTRAIL_DEBIAN_MIRROR", "http://deb.debian.org/debian")
HOST_CA_BUNDLE = Path(os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt")
RECIPE_LABEL = "org.benchtrail.standin-recipe"


class EngineError(RuntimeError):
    pass


def missing_tools() -> list[str]:
    """What `infra/scripts/bootstrap.sh --docker` installs and this machine lacks."""
    missing = [tool for tool in ("dockerd", "docker", "debootstrap") if shutil.which(tool) is None]
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode:
        missing.append("docker compose (Compose v2 plugin)")
    return missing


class Engine:
    """`dockerd` on a socket of its own; `docker(...)` and `compose(...)` talk to it."""

    def __init__(self, cache: Path = CACHE, logdir: Path | None = None) -> None:
        self.cache = cache
        self.root = cache / "engine"
        self.socket = self.root / "docker.sock"
        self.pidfile = self.root / "dockerd.pid"
        self.log = (logdir or cache) / "dockerd.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._lock_fh: io.TextIOWrapper | None = None
        self.driver = ""

    # -- life cycle ---------------------------------------------------------------------------------
    def start(self, lock_timeout: float = 1800) -> Engine:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o700)
        self._lock(lock_timeout)
        try:
            self._stop_stale()
            for driver in ("overlay2", "vfs"):
                if self._start_with(driver):
                    self.driver = driver
                    return self
            raise EngineError(f"dockerd did not start with overlay2 nor vfs; its log: {self.log}")
        except BaseException:
            self._unlock()
            raise

    def _start_with(self, driver: str) -> bool:
        # One data root per storage driver: a driver cannot read the other's layers.
        argv = ["dockerd", "--data-root", str(self.root / f"data-{driver}"), "--exec-root", str(self.root / "exec"),
                "--pidfile", str(self.pidfile), "-H", f"unix://{self.socket}", "--storage-driver", driver,
                "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip=127.0.0.1", "--log-level=warn"]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if self.socket.exists() and self.docker("info", "--format", "{{.Driver}}", check=False).returncode == 0:
                self._forget_containers()
                return True
            time.sleep(0.2)
        self._terminate()
        return False

    def _forget_containers(self) -> None:
        """Containers and volumes of a session that died before cleaning up (restart policies would start its
        stack again with the daemon): removed. Images and the build cache stay."""
        ids = self.docker("ps", "--all", "--quiet").stdout.split()
        if ids:
            self.docker("rm", "--force", "--volumes", *ids)
        self.docker("volume", "prune", "--force")

    def stop(self) -> None:
        """Stop the daemon (its containers with it); the data root and its images stay for the next run."""
        try:
            self._terminate()
            # dockerd leaves its host network namespace mounted in the exec root; a later `rm -rf` would fail on it.
            for ns in (self.root / "exec" / "netns").glob("*"):
                subprocess.run(["umount", str(ns)], capture_output=True, check=False)
        finally:
            self._unlock()

    def _terminate(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def _stop_stale(self) -> None:
        """A daemon a killed session left on this data root (we hold the lock: nobody else uses it)."""
        try:
            pid = int(self.pidfile.read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ValueError, ProcessLookupError):
            return
        if not cmdline or Path(cmdline[0].decode()).name != "dockerd" or str(self.root).encode() not in b" ".join(cmdline):
            return
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not Path(f"/proc/{pid}").exists(), 60, f"the stale dockerd {pid} to stop")

    def _lock(self, timeout: float) -> None:
        self._lock_fh = (self.cache / "lock").open("w")
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(self._lock_fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EngineError(f"another test session holds {self.cache / 'lock'} for more than {timeout} s") from None
                time.sleep(1)

    def _unlock(self) -> None:
        if self._lock_fh is not None:
            fcntl.flock(self._lock_fh, fcntl.LOCK_UN)
            self._lock_fh.close()
            self._lock_fh = None

    # -- commands -----------------------------------------------------------------------------------
    @property
    def env(self) -> dict[str, str]:
        # The classic builder: the engine's BuildKit needs the buildx client plugin, which Debian does not ship.
        return {**os.environ, "DOCKER_HOST": f"unix://{self.socket}", "DOCKER_BUILDKIT": "0",
                "DOCKER_CONFIG": str(self.root / "client")}

    def docker(self, *args: str, check: bool = True, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(["docker", *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise EngineError(f"docker {' '.join(args[:3])} ... exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
        return proc

    def label(self, image: str, key: str) -> str | None:
        out = self.docker("image", "inspect", "--format", "{{json .Config.Labels}}", image, check=False)
        if out.returncode != 0:
            return None
        return (json.loads(out.stdout) or {}).get(key)

    def forget_old_layers(self, limit_gb: float = float(os.environ.get("BENCHTRAIL_DOCKER_CACHE_GB", "40"))) -> None:
        """The classic builder's cache is its untagged images: every change of the code leaves a few behind (tens
        of MB), and the newest of each build stage are among them, so pruning them costs the next run a full
        build. They are pruned only once the engine's images take more than `limit_gb`."""
        rows = self.docker("system", "df", "--format", "{{json .}}").stdout.splitlines()
        images = next((json.loads(r) for r in rows if json.loads(r).get("Type") == "Images"), {})
        size = str(images.get("Size", "0B"))
        units = {"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
        number = size.rstrip("kKMGTB")
        if float(number or 0) * units.get(size[len(number):], 1) > limit_gb * 1e9:
            self.docker("image", "prune", "--force")

    def image_size(self, image: str) -> int:
        return int(self.docker("image", "inspect", "--format", "{{.Size}}", image).stdout.strip())

    def build_from_tar(self, tag: str, context: Iterable[tuple[str, Path | bytes]], dockerfile: str,
                       build_args: dict[str, str], labels: dict[str, str], log: Path) -> None:
        """`docker build` of a context given as (name in the context, host path or bytes) pairs, streamed as a
        tar: no copy of the host's files (the Go toolchain, Node) on disk."""
        argv = ["docker", "build", "--network", "host", "-f", dockerfile, "-t", tag, "-"]
        for k, v in build_args.items():
            argv[-1:-1] = ["--build-arg", f"{k}={v}"]
        for k, v in labels.items():
            argv[-1:-1] = ["--label", f"{k}={v}"]
        with log.open("ab") as out:
            proc = subprocess.Popen(argv, env=self.env, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT)
            assert proc.stdin is not None
            with tarfile.open(fileobj=proc.stdin, mode="w|") as tar:
                for name, src in context:
                    if isinstance(src, bytes):
                        info = tarfile.TarInfo(name)
                        info.size, info.mode = len(src), 0o755
                        tar.addfile(info, io.BytesIO(src))
                    else:
                        tar.add(str(src), arcname=name)
            proc.stdin.close()
            if proc.wait() != 0:
                raise EngineError(f"building {tag} failed; its log: {log}")


# ------------------------------------------------------------------------------------------ stand-ins

@dataclass(frozen=True)
class Bases:
    """The stand-in images, by the build argument / compose setting that names each."""

    python: str
    node: str
    golang: str
    maven: str
    postgres: str
    redis: str

    def compose_env(self) -> dict[str, str]:
        return {"BENCHTRAIL_PYTHON_IMAGE": self.python, "BENCHTRAIL_NODE_IMAGE": self.node,
                "BENCHTRAIL_GOLANG_IMAGE": self.golang, "BENCHTRAIL_MAVEN_IMAGE": self.maven,
                "BENCHTRAIL_POSTGRES_IMAGE": self.postgres, "BENCHTRAIL_REDIS_IMAGE": self.redis}


def _digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:24]


def _pem_blocks(text: str) -> list[str]:
    blocks, current = [], []
    for line in text.splitlines():
        if line.startswith("-----BEGIN CERTIFICATE-----"):
            current = [line]
        elif current:
            current.append(line)
            if line.startswith("-----END CERTIFICATE-----"):
                blocks.append("\n".join(current) + "\n")
                current = []
    return blocks


def debian_base(engine: Engine, log: Path) -> str:
    """Debian bookworm (minbase) with CA certificates, plus the certificates this machine trusts beyond Debian's
    (the test machines reach the package registries through a proxy with its own CA): the root of every stand-in."""
    tag = "benchtrail-standin/debian:bookworm"
    host_bundle = HOST_CA_BUNDLE.read_text() if HOST_CA_BUNDLE.exists() else ""
    recipe = _digest("debootstrap minbase bookworm ca-certificates v1", DEBIAN_MIRROR, host_bundle)
    if engine.label(tag, RECIPE_LABEL) == recipe:
        return tag
    with tempfile.TemporaryDirectory(dir=engine.cache, prefix="debootstrap-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        with log.open("ab") as out:
            subprocess.run(["debootstrap", "--variant=minbase", "--include=ca-certificates", "bookworm", str(rootfs),
                            DEBIAN_MIRROR], stdout=out, stderr=subprocess.STDOUT, check=True)
            known = set(_pem_blocks((rootfs / "etc/ssl/certs/ca-certificates.crt").read_text()))
            extra = [b for b in _pem_blocks(host_bundle) if b not in known]
            local = rootfs / "usr/local/share/ca-certificates"
            for i, block in enumerate(extra):
                (local / f"test-machine-{i}.crt").write_text(block)
            if extra:
                subprocess.run(["chroot", str(rootfs), "update-ca-certificates"], stdout=out, stderr=subprocess.STDOUT,
                               check=True)
        shutil.rmtree(rootfs / "var/cache/apt/archives", ignore_errors=True)
        (rootfs / "var/cache/apt/archives/partial").mkdir(parents=True)
        for d in (rootfs / "var/lib/apt/lists").glob("*_*"):
            d.unlink()
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        changes = ["ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
                   "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt",
                   "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                   f"LABEL {RECIPE_LABEL}={recipe}", 'CMD ["bash"]']
        argv = ["docker", "import", *[a for c in changes for a in ("--change", c)], "-", tag]
        imported = subprocess.run(argv, stdin=tar.stdout, env=engine.env, capture_output=True, text=True)
        tar.wait()
        if imported.returncode != 0:
            raise EngineError(f"docker import of the Debian base failed: {imported.stderr}")
    return tag


def _standin(engine: Engine, name: str, base: str, log: Path, extra: list[tuple[str, Path]],
             identity: str = "") -> str:
    tag = f"benchtrail-standin/{name}:bookworm"
    dockerfile = STANDINS / f"{name}.Dockerfile"
    scripts = sorted(STANDINS.glob(f"{name}-*.sh"))
    base_id = engine.docker("image", "inspect", "--format", "{{.Id}}", base).stdout.strip()
    recipe = _digest(dockerfile.read_bytes(), *[s.read_bytes() for s in scripts], base_id, identity)
    if engine.label(tag, RECIPE_LABEL) == recipe:
        return tag
    context: list[tuple[str, Path | bytes]] = [("Dockerfile", dockerfile.read_bytes())]
    context += [(s.name, s.read_bytes()) for s in scripts] + list(extra)
    engine.build_from_tar(tag, context, "Dockerfile", {"BASE": base}, {RECIPE_LABEL: recipe}, log)
    return tag


def _first_line(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]


def standin_bases(engine: Engine, log: Path) -> Bases:
    base = debian_base(engine, log)
    node = Path(shutil.which("node") or "/usr/bin/node").resolve()
    npm = Path(shutil.which("npm") or "/usr/bin/npm").resolve().parents[1]   # .../node_modules/npm
    goroot = Path(_first_line("go", "env", "GOROOT") if shutil.which("go") else "/usr/local/go")
    return Bases(
        python=_standin(engine, "python", base, log, []),
        node=_standin(engine, "node", base, log, [("node", node), ("npm", npm)],
                      identity=_first_line(str(node), "--version") + (npm / "package.json").read_text()),
        golang=_standin(engine, "golang", base, log, [("go", goroot)],
                        identity=(goroot / "VERSION").read_text()),
        maven=_standin(engine, "maven", base, log, []),
        postgres=_standin(engine, "postgres", base, log, []),
        redis=_standin(engine, "redis", base, log, []),
    )


# ------------------------------------------------------------------------------------------- compose

@dataclass
class Compose:
    """`docker compose` on the users' file plus the test's override, as project `project`."""

    engine: Engine
    project: str
    repo: Path
    env: dict[str, str]
    files: tuple[str, ...] = ("docker-compose.yml", "infra/docker/compose.test.yml")

    def __call__(self, *args: str, check: bool = True, timeout: float = 1800,
                 log: Path | None = None) -> subprocess.CompletedProcess[str]:
        """`docker compose ARGS`; its output captured, or appended to `log` as it comes (long builds)."""
        argv = ["docker", "compose", "--project-directory", str(self.repo), "-p", self.project]
        for f in self.files:
            argv += ["-f", str(self.repo / f)]
        env = {**self.engine.env, **self.env}
        if log is None:
            proc = subprocess.run([*argv, *args], env=env, capture_output=True, text=True, timeout=timeout, cwd=self.repo)
        else:
            with log.open("a") as out:
                proc = subprocess.run([*argv, *args], env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
                                      timeout=timeout, cwd=self.repo)
        if check and proc.returncode != 0:
            detail = f"{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}" if log is None else f"its output: {log}"
            raise EngineError(f"docker compose {' '.join(args)} exited {proc.returncode}: {detail}")
        return proc

    def logs(self) -> str:
        return self("logs", "--no-color", "--timestamps", check=False).stdout

    def states(self) -> dict[str, dict[str, str]]:
        """Service -> {"State": running|exited|..., "Health": healthy|...|"", "ExitCode": ...}."""
        out = self("ps", "--all", "--format", "json", check=False).stdout.strip()
        rows = json.loads(out) if out.startswith("[") else [json.loads(line) for line in out.splitlines() if line]
        return {r["Service"]: r for r in rows}
