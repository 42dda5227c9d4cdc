"""A loopback HTTP/1.1 server whose answers go wrong on purpose, so that load tools print their error
sections: every 7th request waits `--slow` seconds (timeouts), every 11th closes the connection without
an answer (read errors), every 13th answers 500 (non-2xx), the rest 200 with a small body.
Our own generator for tests/corpus; not used by `make test`.

    python flaky_server.py --port 18490 --slow 1.5
"""

from __future__ import annotations

import argparse
import asyncio
import itertools

COUNTER = itertools.count(1)
BODY = b'{"ok":true,"service":"flaky"}'


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, slow: float) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length:
                await reader.readexactly(length)
            n = next(COUNTER)
            if n % 11 == 0:
                writer.close()
                return
            if n % 7 == 0:
                await asyncio.sleep(slow)
            status = b"500 Internal Server Error" if n % 13 == 0 else b"200 OK"
            writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        writer.close()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18490)
    ap.add_argument("--slow", type=float, default=1.5)
    args = ap.parse_args()
    server = await asyncio.start_server(lambda r, w: handle(r, w, args.slow), "127.0.0.1", args.port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
