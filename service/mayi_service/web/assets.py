"""The web table's files as answers: each read once (again when it changes on disk), its gzip
made once and kept, sent gzipped to a client that accepts it, with a strong ``ETag`` of its
content (``-gzip`` appended for the gzipped form) so that a browser revalidating its copy
(``If-None-Match``) gets ``304 Not Modified`` and no body."""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import threading
from dataclasses import dataclass
from pathlib import Path

from flask import Response, abort, request
from werkzeug.security import safe_join

#: The types worth compressing (text); anything else is sent as it is.
COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml")
#: Files smaller than this are sent as they are (gzip's header would outweigh the saving).
MIN_GZIP_BYTES = 512


@dataclass(frozen=True, slots=True)
class Asset:
    """One file as read: its bytes, their gzip (None: not worth it), its type and ``ETag``."""

    stamp: tuple[int, int]  # (mtime_ns, size) when read
    body: bytes
    gzipped: bytes | None
    mimetype: str
    etag: str


_assets: dict[Path, Asset] = {}
_lock = threading.Lock()


def load(path: Path) -> Asset:
    """The file at ``path``, from memory unless it changed on disk since it was read."""
    stat = path.stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    asset = _assets.get(path)
    if asset is not None and asset.stamp == stamp:
        return asset
    body = path.read_bytes()
    mimetype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if path.suffix == ".js":
        mimetype = "text/javascript"
    worth = mimetype.startswith(COMPRESSIBLE) and len(body) >= MIN_GZIP_BYTES
    gzipped = gzip.compress(body, compresslevel=9, mtime=0) if worth else None
    asset = Asset(stamp, body, gzipped, mimetype, hashlib.sha256(body).hexdigest()[:20])
    with _lock:
        _assets[path] = asset
    return asset


def send(folder: Path, name: str, cache_control: str) -> Response:
    """The file ``name`` of ``folder`` (404 if there is none), gzipped when the client accepts
    it, with its ``ETag`` and ``cache_control``; 304 when the client's copy is current."""
    found = safe_join(str(folder), name)
    if found is None or not Path(found).is_file():
        abort(404)
    asset = load(Path(found))
    gzipped = asset.gzipped is not None and "gzip" in request.accept_encodings
    etag = asset.etag + ("-gzip" if gzipped else "")
    headers = {"Cache-Control": cache_control}
    if asset.gzipped is not None:
        headers["Vary"] = "Accept-Encoding"
    if request.if_none_match.contains(etag):
        response = Response(status=304, headers=headers)
        response.set_etag(etag)
        return response
    body = asset.gzipped if gzipped and asset.gzipped is not None else asset.body
    response = Response(body, mimetype=asset.mimetype, headers=headers)  # text/*: charset utf-8
    if gzipped:
        response.headers["Content-Encoding"] = "gzip"
    response.set_etag(etag)
    return response
