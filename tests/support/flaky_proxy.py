"""A loopback TCP proxy in front of the real API (or an object store) that breaks a request on purpose.

It forwards bytes both ways (one thread per direction and connection) and watches the client's bytes
for the request that delivers the results: `POST /api/v1/runs/<slug>/results` or the commit of a
resumable upload, `POST /api/v1/runs/<slug>/results/uploads/<id>/commit` (or the request `requests`
matches). What it does to that request is the fault:

- `cut`: forward the headers and half of the body, then reset every open connection and refuse new
  ones for `outage_s` seconds (the API is gone); after that, results requests are cut the same way for
  `results_down_s` more seconds while every other request (the heartbeats) passes.
- `lose_answer`: forward the whole request, then close the connection as soon as the API starts to
  answer: the API stored the results but the runner never hears so (only the first time).
- `hold`: keep the end of the request until the test sets `release` (a slow upload; released anyway
  after `HOLD_LIMIT_S` so a failed test cannot hang), other connections unaffected (only the first time);
  `held` is set once it holds. `requests` chooses the request held (default: the results request), e.g.
  an S3 PUT when the proxy stands in front of an object store.
- `cut_chunk`: the first chunk of a resumable upload (`PATCH .../results/uploads/<id>?offset=N`) with
  N >= `cut_offset` is cut like `cut` (half its body, then every connection reset and new ones refused
  for `outage_s`). `chunk_bytes` counts the chunk bytes forwarded to the API (whole chunks by their
  Content-Length, plus the half of the cut one): what the server received of the package.
"""

from __future__ import annotations

import re
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

RESULTS = re.compile(rb"POST /api/v1/runs/[^/ ]+/results(?:/uploads/[0-9a-f]+/commit)? HTTP/1\.[01]\r\n")
CHUNK = re.compile(rb"PATCH /api/v1/runs/[^/ ]+/results/uploads/[0-9a-f]+\?offset=(\d+) HTTP/1\.[01]\r\n")
LENGTH = re.compile(rb"(?i)\r\ncontent-length: *(\d+)")
_CHUNK = 65536
HOLD_LIMIT_S = 300.0


def _reset(sock: socket.socket) -> None:
    try:  # RST rather than FIN where possible: what a crashed server or a broken network looks like
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:  # wakes the other direction's thread blocked in recv() on this socket (close() alone does not)
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


@dataclass(eq=False)
class _Conn:
    client: socket.socket
    upstream: socket.socket
    drop_answer: bool = False
    closed: bool = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            _reset(self.client)
            _reset(self.upstream)


@dataclass
class FlakyProxy:
    upstream: tuple[str, int]
    mode: str                      # cut | lose_answer | hold
    outage_s: float = 2.0
    results_down_s: float = 0.0
    release: threading.Event = field(default_factory=threading.Event)   # hold: forward the held request
    held: threading.Event = field(default_factory=threading.Event)      # hold: a request is held
    requests: re.Pattern[bytes] = RESULTS   # the request line a fault applies to (not cut_chunk's)
    cut_offset: int = 0
    chunk_bytes: int = 0           # cut_chunk: chunk bytes forwarded to the API
    chunk_offsets: list[int] = field(default_factory=list)   # cut_chunk: the offset of every chunk seen
    results_requests: int = 0      # results request lines seen
    faults: int = 0                # faults injected
    fault_times: list[float] = field(default_factory=list)
    _refuse_until: float = 0.0
    _results_down_until: float = 0.0
    _conns: set[_Conn] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._stopped = True
        self.release.set()
        self._listener.close()
        with self._lock:
            for c in list(self._conns):
                c.close()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if time.monotonic() < self._refuse_until:
                _reset(client)
                continue
            try:
                upstream = socket.create_connection(self.upstream, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _reset(client)
                continue
            conn = _Conn(client, upstream)
            with self._lock:
                self._conns.add(conn)
            threading.Thread(target=self._to_server, args=(conn,), daemon=True).start()
            threading.Thread(target=self._to_client, args=(conn,), daemon=True).start()

    def _fault_due(self) -> bool:
        """Whether this results request is to be broken (called once per request line)."""
        now = time.monotonic()
        with self._lock:
            self.results_requests += 1
            if self.mode == "cut":
                due = self.faults == 0 or now < self._results_down_until
            else:
                due = self.faults == 0
            if due:
                self.faults += 1
                self.fault_times.append(now)
            return due

    def _chunk_cut_due(self, offset: int) -> bool:
        with self._lock:
            self.chunk_offsets.append(offset)
            due = self.faults == 0 and offset >= self.cut_offset
            if due:
                self.faults += 1
                self.fault_times.append(time.monotonic())
            return due

    def _cut(self, conn: _Conn, pending: bytes) -> None:
        """Send the headers and half of the body of the request at the start of `pending`, then reset."""
        head_end = pending.find(b"\r\n\r\n")
        while head_end < 0:
            more = conn.client.recv(_CHUNK)
            if not more:
                break
            pending += more
            head_end = pending.find(b"\r\n\r\n")
        length = LENGTH.search(pending[:head_end + 2] if head_end >= 0 else b"")
        body_len = int(length.group(1)) if length else 0
        upto = (head_end + 4 if head_end >= 0 else len(pending)) + body_len // 2
        if body_len == 0:  # no body (a commit): half of the headers, so the request never completes
            upto = max(1, (head_end if head_end >= 0 else len(pending)) // 2)
        while len(pending) < upto:
            more = conn.client.recv(_CHUNK)
            if not more:
                break
            pending += more
        try:
            conn.upstream.sendall(pending[:upto])
        except OSError:
            pass
        if self.mode == "cut_chunk":
            self.chunk_bytes += max(0, upto - (head_end + 4))
        now = time.monotonic()
        first = self.faults == 1
        if first:
            self._refuse_until = now + self.outage_s
            self._results_down_until = now + self.outage_s + self.results_down_s
            with self._lock:
                victims = list(self._conns)
            for c in victims:
                c.close()
        conn.close()

    def _to_server(self, conn: _Conn) -> None:
        tail = b""
        try:
            while not conn.closed:
                data = conn.client.recv(_CHUNK)
                if not data:
                    break
                window = tail + data
                # a request line that ends in these new bytes (one seen before is in `tail` already)
                if self.mode == "cut_chunk":
                    chunk = next((m for m in CHUNK.finditer(window) if m.end() > len(tail)), None)
                    if chunk is not None and self._chunk_cut_due(int(chunk.group(1))):
                        start = max(0, chunk.start() - len(tail))
                        if data[:start]:
                            conn.upstream.sendall(data[:start])
                        self._cut(conn, data[start:])
                        return
                    if chunk is not None:
                        length = LENGTH.search(window, chunk.end() - 2)
                        self.chunk_bytes += int(length.group(1)) if length else 0
                    conn.upstream.sendall(data)
                    tail = window[-200:]
                    continue
                match = next((m for m in self.requests.finditer(window) if m.end() > len(tail)), None)
                if match and self._fault_due():
                    start = max(0, match.start() - len(tail))
                    before, request = data[:start], data[start:]
                    if before:
                        conn.upstream.sendall(before)
                    if self.mode == "cut":
                        self._cut(conn, request)
                        return
                    if self.mode == "hold":
                        # All but its last bytes first: on a kept-alive connection the API would close an
                        # idle connection (uvicorn's keep-alive timeout), not one with a request under way.
                        conn.upstream.sendall(request[:-2])
                        request = request[-2:]
                        self.held.set()
                        self.release.wait(HOLD_LIMIT_S)
                    elif self.mode == "lose_answer":
                        conn.drop_answer = True
                    conn.upstream.sendall(request)
                    tail = b""
                    continue
                conn.upstream.sendall(data)
                tail = window[-200:]
        except OSError:
            pass
        finally:
            conn.close()
            with self._lock:
                self._conns.discard(conn)

    def _to_client(self, conn: _Conn) -> None:
        try:
            while not conn.closed:
                data = conn.upstream.recv(_CHUNK)
                if not data:
                    break
                if conn.drop_answer:  # the API answered the results: the runner must never see it
                    break
                conn.client.sendall(data)
        except OSError:
            pass
        finally:
            conn.close()
