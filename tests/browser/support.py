"""What every browser journey shares: Debian's chromium, a page that fails on any JavaScript console
error, an accessibility check (axe-core, shipped inside axe-playwright-python), and screenshots.

Screenshots of every checked page go to $BROWSER_SCREENSHOTS (default tmp/browser-screenshots under
the repository). The manual's screenshots (docs/pages.md; two of them on the README) are a few of them, one screen
high: a run with UPDATE_README_SCREENSHOTS=1 writes those into docs/screenshots/ as well.
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connections

# Playwright's sync API runs an event loop in this thread; the ORM calls made here are safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 740}
NARROW_PHONE = {"width": 360, "height": 740}
# axe-core impacts that fail a page; "moderate" and "minor" are reported, not failed
FAILING_IMPACTS = {"serious", "critical"}
README_SCREENSHOTS = REPO_ROOT / "docs" / "screenshots"
# the README's own two (the demo's dashboard and an annotator's screen on the demo) and the demo's
# flows page are taken from the demo by demo/screenshots.py, so they show what a newcomer sees
README_SHOTS = {
    "annotator-ar-360-screen-other",  # docs/crowd/languages.md: the Arabic screen, mirrored
    "annotator-es-screen",  # and the Spanish one
    "annotator-375-other",
    "study-360-consent",
    "study-360-practice-feedback-1",
    "researcher-1280-jobs",
    "researcher-1280-model",
}

browser_marks = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
    ),
    pytest.mark.django_db(transaction=True),
]


def screenshot_dir() -> Path:
    folder = Path(os.environ.get("BROWSER_SCREENSHOTS") or REPO_ROOT / "tmp" / "browser-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def chromium() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            # ORM calls made while Playwright runs get a connection of their own (greenlet
            # context): close it, or PostgreSQL refuses to drop the test database.
            connections.close_all()


class Journey:
    """One browser context (viewport, downloads) whose pages record every console error and
    uncaught exception; `check` fails the test on them and on serious accessibility findings."""

    def __init__(
        self, browser, base_url: str, viewport: dict, name: str, *, javascript: bool = True, locale: str | None = None
    ):
        self.base_url = base_url
        self.name = name
        self.errors: list[str] = []
        # `locale`: the browser's language (its Accept-Language), e.g. "ar" for the Arabic pages
        options = {"locale": locale} if locale else {}
        self.context = browser.new_context(
            viewport=viewport, accept_downloads=True, java_script_enabled=javascript, **options
        )
        self.page = self.context.new_page()
        self.page.set_default_timeout(10_000)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(f"{self.page.url}: uncaught {error}"))

    def _console(self, message) -> None:
        if message.type == "error":
            self.errors.append(f"{self.page.url}: console error {message.text}")

    def goto(self, path: str):
        response = self.page.goto(self.base_url + path)
        self.page.wait_for_load_state("load")
        return response

    def login(self, username: str, password: str, next_path: str = "/") -> None:
        self.goto(f"/accounts/login/?next={next_path}")
        self.page.fill("input[name=username]", username)
        self.page.fill("input[name=password]", password)
        with self.page.expect_navigation():
            self.page.press("input[name=password]", "Enter")

    def check(self, shot: str, *, full_page: bool = True) -> None:
        """No console error so far, no serious or critical axe finding, and a screenshot."""
        name = f"{self.name}-{shot}"
        self.page.screenshot(path=str(screenshot_dir() / f"{name}.png"), full_page=full_page)
        if name in README_SHOTS and os.environ.get("UPDATE_README_SCREENSHOTS") == "1":
            README_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(README_SCREENSHOTS / f"{name}.png"))
        assert not self.errors, "JavaScript errors:\n" + "\n".join(self.errors)
        findings = accessibility_findings(self.page)
        assert not findings, f"{shot}: accessibility findings:\n" + "\n".join(findings)

    def no_horizontal_scroll(self) -> None:
        widths = self.page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], f"{self.page.url}: the page is {widths[0]} px wide in a {widths[1]} px window"


def accessibility_findings(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {', '.join(str(n['target']) for n in v['nodes'][:5])}"
        for v in results.response["violations"]
        if v["impact"] in FAILING_IMPACTS
    ]


def assert_no_overlaps(page, selector: str) -> None:
    """No two visible elements matching `selector` overlap (forms drawn over each other)."""
    boxes = [box for box in (element.bounding_box() for element in page.locator(selector).all()) if box]
    assert boxes, f"nothing matches {selector}"
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            apart = (
                a["x"] + a["width"] <= b["x"] + 0.5
                or b["x"] + b["width"] <= a["x"] + 0.5
                or a["y"] + a["height"] <= b["y"] + 0.5
                or b["y"] + b["height"] <= a["y"] + 0.5
            )
            assert apart, f"{selector}: {a} overlaps {b}"
