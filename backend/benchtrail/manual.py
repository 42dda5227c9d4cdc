"""The built manual (MkDocs, `make docs`), served by the API at /docs so it always matches the running version.

Its pages start the theme with a few small inline scripts; rather than allowing every inline script, the
manual's Content-Security-Policy allows exactly those, by their sha256, read from the built pages once at
startup. Everything else is the dashboard's policy: the app's own origin only."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S)


def inline_script_hashes(site: Path) -> list[str]:
    """CSP source expressions ('sha256-...') of every distinct inline script of the built pages."""
    found: set[bytes] = set()
    for page in site.rglob("*.html"):
        found.update(_INLINE_SCRIPT.findall(page.read_bytes()))
    return sorted(f"'sha256-{base64.b64encode(hashlib.sha256(body).digest()).decode()}'" for body in found)


def csp(site: Path) -> str:
    scripts = " ".join(["'self'", *inline_script_hashes(site)])
    return (f"default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; "
            "base-uri 'self'; form-action 'self'; frame-ancestors 'none'")


class ManualFiles:
    """The built site's files (index.html for folders, the site's 404 page otherwise) under the manual's CSP."""

    def __init__(self, site: Path) -> None:
        self.files = StaticFiles(directory=site, html=True)
        self.header = (b"content-security-policy", csp(site).encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_csp(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), self.header]
            await send(message)

        await self.files(scope, receive, with_csp)
