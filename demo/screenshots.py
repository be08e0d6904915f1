"""The README's two pictures and the manual's flows picture, taken from the demo as a newcomer sees
it after `make demo`.

    make demo-build            # in another shell: DEBUG=1 .venv/bin/python manage.py runserver 127.0.0.1:8000
    .venv/bin/python demo/screenshots.py http://127.0.0.1:8000

Signs in through the login page with Debian's chromium (playwright drives it; /usr/bin/chromium,
`apt-get install chromium`) as the demo researcher, opens the demo campaign's dashboard at 1280 px,
and its Flows page as the menu opens it, then as annotator2 claims a HIT of the demo campaign and
opens its first screen at 375 px, and writes docs/screenshots/researcher-1280-dashboard.png,
researcher-1280-flows.png and annotator-375-screen.png. Claiming takes
one of the seats left open for people: take the pictures on a throw-away build. The manual's other
pictures are written by the browser tests (docs/pages.md).
"""

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
DEMO_CAMPAIGN = "Demo campaign"


def sign_in(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("main button[type=submit], main input[type=submit]")
    page.wait_for_load_state("networkidle")


def dashboard(browser, base: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, base, "demo", "demo-researcher")
    page.goto(f"{base}/labeling/campaigns/")
    page.get_by_role("link", name=DEMO_CAMPAIGN, exact=True).first.click()
    page.wait_for_load_state("networkidle")  # the dashboard's figures arrive by htmx
    page.screenshot(path=str(OUT / "researcher-1280-dashboard.png"))
    page.close()


def flows(browser, base: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, base, "demo", "demo-researcher")
    page.goto(f"{base}/corpus/analysis/flows/")
    page.locator(".chart .sankey-node").first.wait_for()  # plotly draws it after the page loads
    page.screenshot(path=str(OUT / "researcher-1280-flows.png"))
    page.close()


def annotator_screen(browser, base: str) -> None:
    page = browser.new_page(viewport={"width": 375, "height": 740})
    sign_in(page, base, "annotator2", "demo-annotator2")  # annotator1 may hold a HIT already
    page.goto(f"{base}/labeling/")
    row = page.locator("tr", has=page.get_by_text(DEMO_CAMPAIGN, exact=True))
    row.locator("button[type=submit]").first.click()
    page.wait_for_load_state("networkidle")
    if "/items/" not in page.url:
        raise SystemExit(f"claiming a demo HIT did not open a screen (at {page.url})")
    page.screenshot(path=str(OUT / "annotator-375-screen.png"))
    page.close()


def main() -> None:
    base = (sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000").rstrip("/")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        dashboard(browser, base)
        flows(browser, base)
        annotator_screen(browser, base)
        browser.close()
    print(f"wrote researcher-1280-dashboard.png, researcher-1280-flows.png and annotator-375-screen.png in {OUT}")


if __name__ == "__main__":
    main()
