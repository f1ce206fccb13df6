"""Check in a real browser, offline, that the built site's formulas render.

``python docs/check_math.py docs/_build/html``. Serves the site on a port of 127.0.0.1 and
opens each page that has formulas in headless Chromium with every other host cut off:
names resolve to nothing but localhost, and any request for another host goes to a proxy
of this script's that refuses it (Chromium's net log tells which requests the page made,
apart from the browser's own calls home). In each page's DOM after MathJax ran,
every formula (Sphinx's ``<span|div class="math ...">\\(...\\)</...>``) must hold a
rendered ``<mjx-container>`` and no TeX left as text, and no formula may show a TeX error
(``<mjx-merror>``). The check also fails when the site answers a page's request with an
error (a MathJax extension or font the build did not copy) or a page asks for another
host. It saves a screenshot of one formula-heavy page (``--screenshot``) to look at.

Needs Chromium (Debian: ``apt-get install chromium``); exits with 2 without it, with 1
and one line per problem, printing the formulas rendered on each page.
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
#: Virtual milliseconds a page gets: MathJax loads its extensions and fonts, then typesets.
PAGE_BUDGET_MS = 20_000
PAGE_TIMEOUT_S = 120
SCREENSHOT_PAGE = "user_guide/perceptron.html"
_MATH_CLASS = 'class="math notranslate'
NET_LOG = "net-log.json"
_FORMULA = "<formula>"  # not a tag name: MathJax's output holds MathML's <math>
_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


class _Rendered(HTMLParser):
    """The formulas of a DOM dump: how many, how many rendered, the TeX left as text."""

    def __init__(self) -> None:
        super().__init__()
        self.formulas = 0
        self.rendered = 0  # formulas holding an <mjx-container>
        self.containers = 0
        self.errors = 0  # <mjx-merror>: MathJax could not read the TeX
        self.raw: list[str] = []  # text directly in a formula: TeX MathJax left alone
        self._open: list[str] = []  # the open elements' tags, _FORMULA for a formula's own
        self._text: list[str] = []
        self._has_container = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag in ("span", "div") and "math" in classes and _FORMULA not in self._open:
            self.formulas += 1
            self._text, self._has_container = [], False
            self._open.append(_FORMULA)
            return
        if tag == "mjx-container":
            self.containers += 1
            self._has_container = True
        elif tag == "mjx-merror":
            self.errors += 1
        if tag not in _VOID:
            self._open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        # Closes the last open element of that tag (a formula's own is a span or div) and
        # any left open inside it.
        formula = tag in ("span", "div")
        opened = [
            i for i, name in enumerate(self._open) if name == tag or (formula and name == _FORMULA)
        ]
        if not opened:
            return
        closed = self._open[opened[-1] :]
        del self._open[opened[-1] :]
        if _FORMULA in closed:
            self.rendered += self._has_container
            tex = "".join(self._text).strip()
            if tex:
                self.raw.append(tex)

    def handle_data(self, data: str) -> None:
        # Text of the formula's own element: not MathJax's output, nor the equation number
        # Sphinx writes in a <span> beside it.
        if self._open and self._open[-1] == _FORMULA:
            self._text.append(data)


class _Site(SimpleHTTPRequestHandler):
    """The built site, answering from its folder; each request's path and status noted."""

    requests: list[tuple[str, int]]

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.requests.append((self.path, int(code) if str(code).isdigit() else 0))

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Refusing(BaseHTTPRequestHandler):
    """A proxy that refuses every request: the browser's way to any other host."""

    def _refuse(self) -> None:
        self.send_error(403, "offline check: no other host")

    do_GET = do_POST = do_HEAD = do_CONNECT = do_OPTIONS = do_PUT = _refuse

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _serving(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve with ``handler`` on a free port of 127.0.0.1; yields the server's address."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def find_browser() -> str | None:
    """The first of :data:`BROWSERS` on ``PATH``."""
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _browser(browser: str, proxy: str, profile: Path, *options: str) -> list[str]:
    """Chromium headless, offline but for 127.0.0.1, its net log in ``profile``."""
    return [
        browser,
        "--headless",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
        # Chromium sends loopback addresses past a proxy, everything else to this one.
        f"--proxy-server={proxy}",
        f"--log-net-log={profile / NET_LOG}",
        f"--virtual-time-budget={PAGE_BUDGET_MS}",
        *options,
    ]


def requests_of(net_log: Path, origin: str) -> list[str]:
    """The URLs the pages of ``origin`` asked for, from Chromium's net log.

    Each request names its initiator: the page's origin for what the page (or a script of
    it) loads, none for the browser's own calls to its vendor's services (sign-in, time,
    search), which even ``--disable-background-networking`` leaves and the proxy refuses.
    """
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        event["params"]["url"]
        for event in log["events"]
        if event["type"] == start and event.get("params", {}).get("initiator") == origin
    ]


def math_pages(site: Path) -> list[str]:
    """The site's pages with formulas, relative to it (the theme's fragments left out)."""
    return [
        page.relative_to(site).as_posix()
        for page in sorted(site.rglob("*.html"))
        if page.relative_to(site).parts[0] != "_static"
        and _MATH_CLASS in page.read_text(encoding="utf-8")
    ]


def _page_problems(page: str, dom: _Rendered, answered: list[tuple[str, int]]) -> list[str]:
    problems = [
        f"{page}: {path}: HTTP {status}"
        for path, status in answered
        if status >= 400 and path != "/favicon.ico"  # asked by the browser, not the page
    ]
    if dom.formulas == 0:
        problems.append(f"{page}: no formula in the DOM")
    if dom.rendered < dom.formulas:
        missing = dom.formulas - dom.rendered
        problems.append(f"{page}: {missing} of {dom.formulas} formulas not rendered")
    if dom.raw:
        first = " ".join(dom.raw[0].split())[:60]
        problems.append(f"{page}: TeX left as text in {len(dom.raw)} formula(s), first {first}")
    if dom.errors:
        problems.append(f"{page}: {dom.errors} formula(s) with a TeX error")
    return problems


def check(site: Path, browser: str, pages: list[str], screenshot: Path | None) -> list[str]:
    """Open each of ``pages`` offline; the problems, one line each."""
    problems: list[str] = []
    answered: list[tuple[str, int]] = []
    site_handler = type("Site", (_Site,), {"requests": answered})
    with (
        _serving(functools.partial(site_handler, directory=str(site))) as origin,
        _serving(_Refusing) as proxy,
    ):
        for page in pages:
            answered.clear()
            with tempfile.TemporaryDirectory(prefix="check-math-") as profile:
                command = _browser(browser, proxy, Path(profile), "--dump-dom", f"{origin}/{page}")
                try:
                    run = subprocess.run(
                        command, capture_output=True, text=True, timeout=PAGE_TIMEOUT_S, check=False
                    )
                except subprocess.TimeoutExpired:
                    problems.append(f"{page}: {browser} did not finish in {PAGE_TIMEOUT_S} s")
                    continue
                if run.returncode != 0:
                    problems.append(f"{page}: {browser} exited with {run.returncode}")
                    continue
                elsewhere = [
                    url
                    for url in requests_of(Path(profile) / NET_LOG, origin)
                    if not url.startswith((f"{origin}/", "data:", "blob:"))
                ]
            dom = _Rendered()
            dom.feed(run.stdout)
            problems += _page_problems(page, dom, answered)
            problems += [f"{page}: asked for a resource outside the site: {u}" for u in elsewhere]
            loaded = sum(1 for path, _ in answered if path.startswith("/_static/mathjax/"))
            print(
                f"{page}: {dom.rendered}/{dom.formulas} formulas rendered "
                f"({dom.containers} mjx-container, {loaded} MathJax files loaded)"
            )
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.unlink(missing_ok=True)
            with tempfile.TemporaryDirectory(prefix="check-math-") as profile:
                command = _browser(
                    browser,
                    proxy,
                    Path(profile),
                    f"--screenshot={screenshot.resolve()}",
                    "--window-size=1200,1600",
                    "--hide-scrollbars",
                    f"{origin}/{SCREENSHOT_PAGE}",
                )
                subprocess.run(command, capture_output=True, timeout=PAGE_TIMEOUT_S, check=False)
            if screenshot.is_file():
                print(f"screenshot of {SCREENSHOT_PAGE}: {screenshot}")
            else:
                problems.append(f"{SCREENSHOT_PAGE}: no screenshot")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_site = Path(__file__).parent / "_build" / "html"
    parser.add_argument("site", nargs="?", type=Path, default=default_site)
    parser.add_argument("--pages", nargs="+", help="pages to open (default: all with math)")
    parser.add_argument(
        "--screenshot",
        type=Path,
        default=Path(__file__).parent / "_build" / "math-screenshot.png",
        help=f"where to save a screenshot of {SCREENSHOT_PAGE}",
    )
    args = parser.parse_args(argv)
    browser = find_browser()
    if browser is None:
        print(
            f"check_math: no browser found ({', '.join(BROWSERS)}): this check opens the site "
            "in headless Chromium (Debian: apt-get install chromium)",
            file=sys.stderr,
        )
        return 2
    if not (args.site / "index.html").is_file():
        print(f"check_math: {args.site} holds no built site (index.html)", file=sys.stderr)
        return 2
    pages = args.pages or math_pages(args.site)
    problems = check(args.site, browser, pages, args.screenshot)
    for problem in problems:
        print(problem)
    print(f"{len(pages)} pages with formulas opened in {browser}: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
