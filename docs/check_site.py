"""Check the built site: internal links and anchors, API pages, the gallery's run times.

``python docs/check_site.py docs/_build/html``. CI reaches only package registries, so
this is the link check: Sphinx's ``linkcheck`` builder would fetch the external links, and
``nitpicky`` cross-reference checking covers the references Sphinx resolves itself, not the
hrefs the theme, the gallery and raw HTML write. It also checks that every API entry has its
page, and that each gallery example made a figure and ran in under
:data:`EXAMPLE_SECONDS` (sphinx-gallery writes the time on the example's page; the
examples take a few seconds, so the limit has a wide margin). And the site reads offline:
no page loads a resource from outside it (a script, stylesheet, icon, image, frame or media
source at an ``http(s)://`` or ``//host`` address, in its HTML, its ``<style>`` elements or
its ``.css`` files; links to other sites are navigation, not resources). Exits with 1 and
one line per problem.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_names import documented_names

#: The most an example may take (the issue's limit for the gallery).
EXAMPLE_SECONDS = 30.0
_RUNNING_TIME = re.compile(
    r"Total running time of the script:\s*</strong>\s*\((\d+) minutes ([\d.]+) seconds\)"
)


#: The attributes by which an element loads a resource when the page is shown.
_RESOURCE_ATTRIBUTES = {
    "script": ("src",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "input": ("src",),
}
#: ``<link rel=...>`` kinds that load what ``href`` names (``rel`` holds several, spaced).
_RESOURCE_LINKS = {
    "stylesheet",
    "preload",
    "modulepreload",
    "prefetch",
    "icon",
    "apple-touch-icon",
    "mask-icon",
    "manifest",
}
#: ``url(...)`` and ``@import "..."`` in CSS: the address, without quotes.
_CSS_ADDRESS = re.compile(r"""url\(\s*["']?([^"')\s]+)|@import\s+["']([^"']+)["']""", re.IGNORECASE)


def _outside(address: str) -> bool:
    """Whether the browser fetches ``address`` from another host (``http(s)://``, ``//``)."""
    address = address.strip().lower()
    return address.startswith(("http://", "https://", "//"))


def _addresses(attribute: str, value: str) -> list[str]:
    """The addresses an attribute names: ``srcset`` lists ``address width, ...``."""
    if attribute != "srcset":
        return [value]
    return [candidate.split()[0] for candidate in value.split(",") if candidate.strip()]


def _css_outside(css: str) -> list[str]:
    """The addresses outside the site that a style sheet's ``url()`` and ``@import`` load."""
    found = (url or imported for url, imported in _CSS_ADDRESS.findall(css))
    return [address for address in found if _outside(address)]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        #: ``<tag attribute>: address`` of each resource loaded from outside the site.
        self.outside: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name in ("id", "name"):
            if values.get(name):
                self.ids.add(values[name] or "")
        for name in ("href", "src"):
            target = values.get(name)
            if target and not (tag == "link" and values.get("rel") == "preconnect"):
                self.links.append(target)
        loads = _RESOURCE_ATTRIBUTES.get(tag, ())
        if tag == "link" and _RESOURCE_LINKS & set((values.get("rel") or "").lower().split()):
            loads = ("href",)
        for name in loads:
            for address in _addresses(name, values.get(name) or ""):
                if _outside(address):
                    self.outside.append(f"<{tag} {name}>: {address}")
        if values.get("style"):
            self.outside += [f"<{tag} style>: {a}" for a in _css_outside(values["style"] or "")]
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.outside += [f"<style>: {address}" for address in _css_outside(data)]


def _same_object(page: Path, fragment: str) -> bool:
    """An API page's object, anchored under another of its names.

    viewcode links each function back to its page by one module path per source module
    (``#perceptrons.io.persist.save`` for the page of ``perceptrons.save``). An API page
    documents one object, so such a link lands on it all the same.
    """
    return (
        page.parent.name == "generated"
        and fragment.rsplit(".", 1)[-1] == (page.stem.rsplit(".", 1)[-1])
    )


def check(site: Path) -> list[str]:
    pages: dict[Path, _Links] = {}
    for page in sorted(site.rglob("*.html")):
        if page.relative_to(site).parts[0] == "_static":
            continue  # the theme's template fragments, not pages
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        pages[page.resolve()] = parser
    problems = []
    for page, parser in pages.items():
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//") or link.startswith("mailto:"):
                continue  # external: not checked (CI reaches no other site)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(site.resolve())}: {link}"
            if not target.exists():
                problems.append(f"{where}: no such file")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                fragment = unquote(parts.fragment)
                if fragment not in ids and not _same_object(target, fragment):
                    problems.append(f"{where}: no anchor #{parts.fragment}")
    for page, parser in pages.items():
        where = page.relative_to(site.resolve())
        problems += [f"{where}: {resource}: outside the site" for resource in parser.outside]
    for sheet in sorted(site.rglob("*.css")):
        where = sheet.relative_to(site)
        text = sheet.read_text(encoding="utf-8", errors="replace")
        problems += [f"{where}: {address}: outside the site" for address in _css_outside(text)]
    generated = site / "api" / "generated"
    for name in documented_names():
        if not (generated / f"{name}.html").is_file():
            problems.append(f"api/generated/{name}.html: missing (the page of {name})")
    for page in sorted((site / "auto_examples").glob("*.html")):
        text = page.read_text(encoding="utf-8")
        match = _RUNNING_TIME.search(text)
        if match:  # the example ran (one needing absent data is shown, not run)
            seconds = 60 * int(match.group(1)) + float(match.group(2))
            if seconds > EXAMPLE_SECONDS:
                problems.append(f"{page.name}: the example ran {seconds:.1f} s")
            if f"_images/sphx_glr_{page.stem}_0" not in text:
                problems.append(f"{page.name}: the example made no figure")
    return problems


def main(argv: list[str]) -> int:
    site = Path(argv[1] if len(argv) > 1 else Path(__file__).parent / "_build" / "html")
    problems = check(site)
    for problem in problems:
        print(problem)
    n_pages = sum(1 for _ in site.rglob("*.html"))
    print(f"{n_pages} pages checked: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
