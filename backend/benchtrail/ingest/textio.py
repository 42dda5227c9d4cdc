"""Reading result files as text: BOMs, legacy code pages and Windows line ends.

Tools write in the platform charset (Locust on a Chinese Windows writes GBK) and Python's csv module
on Windows writes `\\r\\r\\n`; every text parser goes through `decode` so none has to care.
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .model import ParseError

HEAD_BYTES = 64 * 1024

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def decode(data: bytes, *, partial: bool = False) -> tuple[str, str]:
    """Return (text with normalised `\\n` line ends, encoding used).

    `partial` tolerates a multi-byte character cut at the end of a head read."""
    for bom, enc in _BOMS:
        if data.startswith(bom):
            body = data[len(bom):]
            try:
                text = body.decode(enc, errors="replace" if partial else "strict")
            except UnicodeDecodeError as exc:
                raise undecodable(body, exc, enc) from None
            return normalise_newlines(text), enc
    # gb18030 is a superset of GBK/GB2312; latin-1 never fails, so it is the last resort.
    for enc in ("utf-8", "gb18030"):
        try:
            text = data.decode(enc)
            return normalise_newlines(text), enc
        except UnicodeDecodeError as exc:
            if partial and enc == "utf-8" and exc.start >= len(data) - 3:
                return normalise_newlines(data[: exc.start].decode(enc)), enc
    return normalise_newlines(data.decode("latin-1")), "latin-1"


def undecodable(data: bytes, exc: UnicodeDecodeError, encoding: str) -> ParseError:
    """A refusal naming the line of the first byte that is not `encoding` (the file starts with its
    byte-order mark, so no other encoding can be guessed)."""
    line = data.count(b"\n", 0, exc.start) + 1
    return ParseError(f"the file starts with a {encoding} byte-order mark but byte {exc.start} is not valid "
                      f"{encoding} ({data[exc.start:exc.start + 4]!r})", line=line)


def line_of_offset(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, max(0, offset)) + 1


def normalise_newlines(text: str) -> str:
    if "\r" not in text:
        return text
    return text.replace("\r\r\n", "\n").replace("\r\n", "\n").replace("\r", "\n")


GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when it is gzip (k6 `--out json=x.json.gz`, archived JTLs)."""
    data = path.read_bytes()
    if data.startswith(GZIP_MAGIC):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ParseError(f"{path.name}: broken gzip stream ({exc})") from None
    return data


def read_text(path: Path) -> str:
    data = read_bytes(path)
    if not data.strip():
        raise ParseError(f"{path.name} is empty")
    return decode(data)[0]


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    with path.open("rb") as fh:
        head = fh.read(size)
    if head.startswith(GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as gz:
                return gz.read(size)
        except (OSError, EOFError, zlib.error) as exc:
            raise ParseError(f"{path.name}: broken gzip stream ({exc})") from None
    return head


def parse_number(text: str, *, line: int | None = None, field: str | None = None) -> float:
    """A float from tool output; a comma decimal (JVM default locale) is accepted."""
    t = text.strip()
    try:
        return float(t)
    except ValueError:
        pass
    if t.count(",") == 1 and "." not in t:
        try:
            return float(t.replace(",", "."))
        except ValueError:
            pass
    raise ParseError(f"'{text}' is not a number", line=line, field=field)


CHUNK = 1 << 20


def _open_binary(path: Path) -> BinaryIO:
    with path.open("rb") as fh:
        gzipped = fh.read(2) == GZIP_MAGIC
    return gzip.open(path, "rb") if gzipped else path.open("rb")  # type: ignore[return-value]


def text_encoding(path: Path) -> str:
    """The encoding `decode` would choose for the whole file, found in one streaming pass (a BOM, else
    UTF-8 if every byte is, else GB18030, else Latin-1) without holding the file in memory."""
    head = read_head(path, 4)
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return enc
    for enc in ("utf-8", "gb18030"):
        decoder = codecs.getincrementaldecoder(enc)()
        try:
            with _open_binary(path) as fh:
                while chunk := fh.read(CHUNK):
                    decoder.decode(chunk)
                decoder.decode(b"", final=True)
            return enc
        except UnicodeDecodeError:
            continue
        except (OSError, EOFError, zlib.error) as exc:
            raise ParseError(f"{path.name}: broken gzip stream ({exc})") from None
    return "latin-1"


def iter_lines(path: Path, encoding: str | None = None) -> Iterator[str]:
    """The file's lines as `decode` reads them (BOM dropped, `\\n` line ends), one at a time."""
    encoding = encoding or text_encoding(path)
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    pending = ""
    first = True
    yielded = 0
    chunk = b""
    buffered = b""
    try:
        with _open_binary(path) as fh:
            while True:
                chunk = fh.read(CHUNK)
                buffered = decoder.getstate()[0]
                text = pending + decoder.decode(chunk, final=not chunk)
                if first and text[:1] == "\ufeff":
                    text = text[1:]
                first = False
                if chunk:
                    # Cut after the last `\n` only, so that a `\r\n` or `\r\r\n` split between chunks stays whole.
                    cut = text.rfind("\n") + 1
                    text, pending = text[:cut], text[cut:]
                lines = normalise_newlines(text).split("\n")
                for line in lines[:-1]:
                    yielded += 1
                    yield line + "\n"
                if not chunk:
                    if lines[-1]:
                        yield lines[-1]
                    return
    except UnicodeDecodeError as exc:
        # The line of the bad byte: the lines read before this chunk, plus those of the chunk before it.
        good = (buffered + chunk)[:exc.start].decode(encoding, errors="ignore")
        line = yielded + normalise_newlines(pending + good).count("\n") + 1
        raise ParseError(f"{path.name}: bytes that are not valid {encoding} ({exc.reason})", line=line) from None
    except (OSError, EOFError) as exc:
        raise ParseError(f"{path.name}: broken gzip stream ({exc})") from None


def recode(path: Path, dest: Path, *, limit: int | None = None) -> Path:
    """`dest`: the file as UTF-8 with `\\n` line ends (at most `limit` lines), written as it is read."""
    with dest.open("w", encoding="utf-8", newline="") as out:
        for i, line in enumerate(iter_lines(path)):
            if limit is not None and i >= limit:
                break
            out.write(line)
    return dest
