"""What a newcomer does first, against a running demo: sign in as annotator1 through the login page,
start the demo campaign, walk its study flow (consent, instructions, the practice: answers learned
from its feedback when the first try falls short), reach the first work screen, answer it and see
the next one.

    python .ci/demo_smoke.py http://127.0.0.1:8765

A plain HTTP client (the standard library only: cookies, the CSRF token read from each form, the
redirects followed) talking to the server `make demo` serves, so it checks what people get. Exits
non-zero, saying which step failed and what the page said, on any failure.
"""

import html
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

USERNAME, PASSWORD = "annotator1", "demo-annotator1"
DEMO_CAMPAIGN = "Demo campaign"


class SmokeFailed(Exception):
    pass


class Browser:
    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        self.url = self.base

    def get(self, path: str) -> str:
        return self._open(urllib.request.Request(self._absolute(path)))

    def post(self, path: str, fields: list[tuple[str, str]], referer: str) -> str:
        data = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(self._absolute(path), data=data, headers={"Referer": referer})
        return self._open(request)

    def _absolute(self, path: str) -> str:
        return path if path.startswith("http") else self.base + path

    def _open(self, request: urllib.request.Request) -> str:
        try:
            with self.opener.open(request, timeout=30) as response:
                self.url = response.geturl()
                return response.read().decode("utf-8")
        except urllib.error.HTTPError as error:
            body = error.read().decode("utf-8", "replace")
            raise SmokeFailed(
                f"{request.get_method()} {request.full_url}: HTTP {error.code}\n{_text(body)[:800]}"
            ) from None


def _text(page: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page))).strip()


def _csrf(page: str) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    if not found:
        raise SmokeFailed("no CSRF token on the page:\n" + _text(page)[:800])
    return found.group(1)


def _wait_for(browser: Browser, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            browser.get("/accounts/login/")
            return
        except (urllib.error.URLError, ConnectionError, SmokeFailed):
            if time.monotonic() > deadline:
                raise SmokeFailed(f"the server at {browser.base} did not answer within {seconds:.0f} s") from None
            time.sleep(1)


def _demo_campaign_id(home: str) -> str:
    """The demo campaign's id from its row's claim form on the annotator's home page."""
    for row in re.findall(r"<tr.*?</tr>", home, flags=re.S):
        name = re.search(r"<strong>(.*?)</strong>", row)
        campaign = re.search(r'name="campaign" value="(\d+)"', row)
        if name and campaign and html.unescape(name.group(1)).strip() == DEMO_CAMPAIGN:
            return campaign.group(1)
    raise SmokeFailed(f"no claim form for {DEMO_CAMPAIGN!r} on the annotator's home page:\n" + _text(home)[:1500])


def run(base: str) -> None:
    browser = Browser(base)
    _wait_for(browser, 120)
    login = browser.get("/accounts/login/")
    home = browser.post(
        "/accounts/login/?next=/labeling/",
        [("csrfmiddlewaretoken", _csrf(login)), ("username", USERNAME), ("password", PASSWORD)],
        referer=browser.url,
    )
    if "/labeling/" not in browser.url:
        raise SmokeFailed(f"signing in as {USERNAME} did not reach /labeling/ (at {browser.url}):\n{_text(home)[:800]}")
    print(f"signed in as {USERNAME}")
    campaign = _demo_campaign_id(home)
    screen = browser.post(
        "/labeling/claim/", [("csrfmiddlewaretoken", _csrf(home)), ("campaign", campaign)], referer=browser.url
    )
    screen = walk_the_study_flow(browser, screen)
    first = re.search(r"/labeling/assignments/(\d+)/items/(\d+)/$", browser.url)
    if not first:
        raise SmokeFailed(
            f"claiming a HIT of campaign {campaign} did not open a screen (at {browser.url}):\n{_text(screen)[:800]}"
        )
    assignment, position = first.group(1), int(first.group(2))
    total = re.search(r"(\d+)/(\d+)</h1>", screen)
    print(f"claimed: assignment {assignment}, screen {position} of {total.group(2) if total else '?'}")
    choice = re.search(r'name="answer" value="([^"]+)"', screen)
    action = re.search(r'<form id="item-form" method="post" action="([^"]+)"', screen)
    if not (choice and action):
        raise SmokeFailed("the screen has no answer form:\n" + _text(screen)[:800])
    answer = html.unescape(choice.group(1))
    nxt = browser.post(
        html.unescape(action.group(1)),
        [("csrfmiddlewaretoken", _csrf(screen)), ("seconds", "4"), ("answer", answer), ("go", "next")],
        referer=browser.url,
    )
    expected = f"/labeling/assignments/{assignment}/items/{position + 1}/"
    if not browser.url.endswith(expected) or f"{position + 1}/" not in nxt:
        raise SmokeFailed(
            f"after answering {answer!r} the next screen did not open (at {browser.url}):\n{_text(nxt)[:800]}"
        )
    print(f"answered screen {position} with {answer!r}; screen {position + 1} is shown")


STEP = re.compile(r'<main[^>]*data-step="([a-z]+)"')


def walk_the_study_flow(browser: Browser, page: str) -> str:
    """Consent, instructions and practice, as a newcomer meets them (each page names its step in
    data-step); the practice's right answers are read off its feedback and used on a retry. Returns
    the first work screen."""
    learned: dict[str, str] = {}
    for _ in range(40):
        step = STEP.search(page)
        step = step.group(1) if step else ""
        if step in ("", "work"):
            return page
        here = browser.url
        if step in ("consent", "instructions"):
            fields = [("csrfmiddlewaretoken", _csrf(page))] + ([("decision", "agree")] if step == "consent" else [])
            page = browser.post(here, fields, referer=here)
            print(f"study flow: {step} done")
        elif step == "practice":
            page = _practice_page(browser, page, learned)
        else:
            raise SmokeFailed(f"the study flow stopped at {step!r} (at {here}):\n{_text(page)[:800]}")
    raise SmokeFailed("the study flow did not reach the work in 40 pages")


def _practice_page(browser: Browser, page: str, learned: dict[str, str]) -> str:
    here = browser.url
    item = re.search(r'name="item" value="(\d+)"', page)
    if item:  # a practice screen: what the feedback taught, else the first choice
        choices = re.findall(r'name="answer" value="([^"]+)"', page)
        answer = learned.get(item.group(1), html.unescape(choices[0]))
        fields = [("csrfmiddlewaretoken", _csrf(page)), ("item", item.group(1)), ("answer", answer)]
        feedback = browser.post(here, fields, referer=here)
        right = re.search(r"(?:right answer is|The answer is) ([^.<]+)\.", feedback)
        if right:
            learned[item.group(1)] = html.unescape(right.group(1)).strip()
        following = re.search(r'id="practice-next" href="([^"]+)"', feedback)
        return browser.get(html.unescape(following.group(1))) if following else feedback
    start = re.search(
        r'<form method="post" action="([^"]+)">\s*<input[^>]*csrfmiddlewaretoken[^>]*>\s*<button[^>]*id="start-work"',
        page,
    )
    if start:
        print(f"study flow: practice passed ({len(learned)} answers learned from its feedback)")
        return browser.post(html.unescape(start.group(1)), [("csrfmiddlewaretoken", _csrf(page))], referer=here)
    retry = re.search(r'id="practice-retry" href="([^"]+)"', page)
    if retry:
        print("study flow: practice retried with what its feedback said")
        return browser.get(html.unescape(retry.group(1)))
    raise SmokeFailed("a practice page with no screen, no retry and no start:\n" + _text(page)[:800])


def main() -> int:
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    try:
        run(base)
    except SmokeFailed as failure:
        print(f"demo smoke test FAILED: {failure}", file=sys.stderr)
        return 1
    print("demo smoke test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
