"""MathJax served by the site itself, so that its formulas render without network.

``sphinx.ext.mathjax`` points every page at MathJax's CDN by default: a reader offline (or
behind a firewall) sees raw TeX. This extension fetches one pinned MathJax release from
the npm registry when the site is built, checks the tarball against the ``integrity``
hash the registry publishes for it (:data:`MATHJAX_INTEGRITY`, hard-coded: a tarball that
changed fails the build), and copies into ``_static/mathjax/`` what the pages use:

- ``es5/tex-chtml.js``: TeX input and CommonHTML output in one file (the pages have no
  MathML or AsciiMath source);
- ``es5/input/tex/extensions/``: the TeX packages its ``autoload`` loads when a page first
  uses one of their macros (``\\boldsymbol`` loads ``boldsymbol.js``);
- ``es5/output/chtml/fonts/woff-v2/``: the fonts CommonHTML draws the formulas with;
- ``LICENSE`` (Apache 2.0, which asks that copies carry it).

About 2 MB, of the release's 24 MB: left out are the other combined components, the SVG
output and the speech rule engine (``es5/sre``, ``es5/a11y``) that MathJax's menu loads
when a reader turns on its accessibility explorer, which then reports the files missing.

The tarball is cached in ``docs/_build/.mathjax/`` (checked again on every build).
A build with no network may set ``PERCEPTRONS_MATHJAX`` to an unpacked copy of the
release (the ``package/`` folder of the tarball, or ``node_modules/mathjax`` after
``npm install mathjax@3.2.2``). A download that fails fails the build: the site never
falls back to the CDN.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import tarfile
import urllib.request
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

MATHJAX_VERSION = "3.2.2"
MATHJAX_TARBALL = f"https://registry.npmjs.org/mathjax/-/mathjax-{MATHJAX_VERSION}.tgz"
#: The ``dist.integrity`` of mathjax 3.2.2 in the npm registry (Subresource Integrity form).
MATHJAX_INTEGRITY = "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="  # noqa: E501
#: An unpacked copy of the release, for a build without network.
ENVIRONMENT_VARIABLE = "PERCEPTRONS_MATHJAX"
#: The script the pages load, relative to ``_static/`` (what ``mathjax_path`` names).
COMPONENT = "mathjax/tex-chtml.js"
#: What is copied, as paths in the package; a folder is copied whole. ``es5/`` becomes
#: ``_static/mathjax/``: MathJax finds its extensions and fonts next to its script.
NEEDED = (
    "es5/tex-chtml.js",
    "es5/input/tex/extensions/",
    "es5/output/chtml/fonts/woff-v2/",
    "LICENSE",
)
DOWNLOAD_SECONDS = 120

logger = logging.getLogger(__name__)


def integrity(data: bytes) -> str:
    """The Subresource Integrity string (``sha512-<base64>``) of ``data``, as npm writes it."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def _destination(name: str) -> str | None:
    """Where a file of the package goes under ``_static/mathjax/``; None if not needed
    (or if its name would climb out of that folder)."""
    if ".." in name.split("/") or name.startswith("/"):
        return None
    if not any(
        name.startswith(needed) if needed.endswith("/") else name == needed for needed in NEEDED
    ):
        return None
    return name.removeprefix("es5/")


def _download(cache: Path) -> bytes:
    try:
        with urllib.request.urlopen(MATHJAX_TARBALL, timeout=DOWNLOAD_SECONDS) as response:
            data: bytes = response.read()
    except OSError as error:
        raise ExtensionError(
            f"MathJax {MATHJAX_VERSION} could not be downloaded from {MATHJAX_TARBALL}: "
            f"{error}. The site serves its own copy of MathJax, so that its formulas render "
            f"without network; on a machine with no network, set {ENVIRONMENT_VARIABLE} to an "
            f"unpacked copy of mathjax {MATHJAX_VERSION} (the package/ folder of that tarball)."
        ) from error
    found = integrity(data)
    if found != MATHJAX_INTEGRITY:
        raise ExtensionError(
            f"{MATHJAX_TARBALL} is not the tarball the npm registry published: its hash is "
            f"{found}, not {MATHJAX_INTEGRITY} (docs/_ext/local_mathjax.py)."
        )
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(cache)
    return data


def tarball(cache: Path) -> bytes:
    """The release's tarball: the cached one if it is intact, else downloaded and cached."""
    if cache.is_file():
        data = cache.read_bytes()
        if integrity(data) == MATHJAX_INTEGRITY:
            return data
        logger.info("local_mathjax: %s is not the published tarball; downloading it again", cache)
    else:
        logger.info("local_mathjax: downloading %s", MATHJAX_TARBALL)
    return _download(cache)


def copy_from_tarball(data: bytes, target: Path) -> int:
    """Copy the needed files of the tarball ``data`` into ``target``; the bytes copied."""
    size = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            # npm tarballs hold one top folder, "package/".
            destination = _destination(member.name.partition("/")[2])
            if destination is None or not member.isfile():
                continue
            source = archive.extractfile(member)
            assert source is not None  # a regular file
            path = target / destination
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(source.read())
            size += member.size
    return size


def copy_from_folder(package: Path, target: Path) -> int:
    """Copy the needed files of an unpacked release ``package`` into ``target``."""
    manifest = package / "package.json"
    try:
        found = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ExtensionError(
            f"{ENVIRONMENT_VARIABLE}={package} is not an unpacked mathjax package: "
            f"cannot read {manifest} ({error})."
        ) from error
    if found.get("name") != "mathjax" or found.get("version") != MATHJAX_VERSION:
        raise ExtensionError(
            f"{ENVIRONMENT_VARIABLE}={package} holds {found.get('name')} "
            f"{found.get('version')}, not mathjax {MATHJAX_VERSION}."
        )
    size = 0
    for path in sorted(package.rglob("*")):
        destination = _destination(path.relative_to(package).as_posix())
        if destination is not None and path.is_file():
            (target / destination).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / destination)
            size += path.stat().st_size
    if not (target / "tex-chtml.js").is_file():
        raise ExtensionError(f"{ENVIRONMENT_VARIABLE}={package} has no es5/tex-chtml.js.")
    return size


def _install(app: Sphinx) -> None:
    """Put MathJax in the site's ``_static/mathjax/`` before any page is written."""
    if app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    shutil.rmtree(target, ignore_errors=True)  # nothing left from another release
    unpacked = os.environ.get(ENVIRONMENT_VARIABLE)
    if unpacked:
        size = copy_from_folder(Path(unpacked), target)
        origin = unpacked
    else:
        cache = Path(app.confdir) / "_build" / ".mathjax" / f"mathjax-{MATHJAX_VERSION}.tgz"
        size = copy_from_tarball(tarball(cache), target)
        origin = str(cache)
    logger.info("local_mathjax: MathJax %s from %s, %.1f MB", MATHJAX_VERSION, origin, size / 1e6)


def _point_at_the_copy(app: Sphinx, config) -> None:
    # A relative mathjax_path is a file of _static/ (sphinx.ext.mathjax's rule).
    config.mathjax_path = COMPONENT


def setup(app: Sphinx) -> dict[str, object]:
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _point_at_the_copy)
    app.connect("builder-inited", _install)
    return {"version": MATHJAX_VERSION, "parallel_read_safe": True, "parallel_write_safe": True}
