"""Check the built site: internal links and anchors, API pages, the gallery's run times.

``python docs/check_site.py docs/_build/html``. CI has no network, so this is the
link check: Sphinx's ``linkcheck`` builder would fetch the external links, and
``nitpicky`` cross-reference checking covers the references Sphinx resolves itself, not the
hrefs the theme, the gallery and raw HTML write. It also checks that every API entry has its
page, and that each gallery example made a figure and ran in under
:data:`EXAMPLE_SECONDS` (sphinx-gallery writes the time on the example's page; the
examples take a few seconds, so the limit has a wide margin). Exits with 1 and one line
per problem.
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


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name in ("id", "name"):
            if values.get(name):
                self.ids.add(values[name] or "")
        for name in ("href", "src"):
            target = values.get(name)
            if target and not (tag == "link" and values.get("rel") == "preconnect"):
                self.links.append(target)


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
                continue  # external: not checked (no network in CI)
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
