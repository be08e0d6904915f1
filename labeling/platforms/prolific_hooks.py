"""Prolific's webhooks, the publish step's half: the workspace's signing secret and one confirmed
subscription per event type we act on, for the site's public address (labeling.platforms.prolific_events
receives what they send). Publishing calls `subscribe_events` after the studies are live; it never fails
a publication: events are an addition, the sync stays the fallback and the check that nothing was missed.

What Prolific documents (https://docs.prolific.com/api-reference/webhooks/...):
- the secret: "you can only have one active secret per workspace at a time"
  (https://docs.prolific.com/documentation/core-concepts/monitoring-study-progress); GET
  /hooks/secrets/?workspace_id= lists it with its `value` (get-secrets); POST /hooks/secrets/
  {"workspace_id"} makes one and "If a secret already exists, this call will delete the old secret and
  create a new one" (create-secret). So a listed secret is used, never replaced (replacing it would
  break whoever else verifies this workspace's events), and one is made only when none is listed.
- subscriptions: GET /hooks/subscriptions/?workspace_id= (enabled ones: "A filter to only pull back
  enabled subscriptions. Default true", get-subscriptions); POST /hooks/subscriptions/ {"event_type",
  "target_url", "workspace_id"} answers 201 with the subscription and an `X-Hook-Secret` header
  (create-subscription; monitoring-study-progress: "An id field in the body", while the reference's
  schema is {"results": [...]}: both are read); POST /hooks/subscriptions/{subscription_id}/ with
  {"secret": <X-Hook-Secret>} confirms it (confirm-subscription; the guide's "Replace
  <subscription_id> with the value of the X-Hook-Secret header" contradicts the reference's path and
  body, which we follow). "target_url must use https:// and be publicly accessible": without an https
  SITE_URL events stay off and the page says so.
- a republish lists first: an enabled subscription of the same event type and target is kept, so
  no retry makes a second one. Creating is not repeated after an unknown outcome (a lost answer):
  the next publish lists again. Whether an unconfirmed subscription is listed is not documented.

The secret is kept sealed (`seal`): encrypted and authenticated with keys derived from
WEBHOOK_SECRET_KEY, so a database dump alone does not reveal it; no page or answer shows it.
"""

import base64
import hashlib
import hmac
import secrets

from django.conf import settings
from django.urls import reverse

from config.scrub import scrub
from labeling.models import PlatformHook, Publication
from labeling.platforms.base import PlatformError

EVENT_TYPES = ("submission.status.change", "study.status.change")
_NONCE, _TAG = 16, 32


def events_url() -> str:
    """Where Prolific is asked to send events: SITE_URL's https address and our receiving path, or ""."""
    site = settings.SITE_URL or ""
    if not site.lower().startswith("https://"):
        return ""
    return site.rstrip("/") + reverse("labeling:prolific_events")


def events_off_reason() -> str:
    return (
        "Prolific events are off: SITE_URL is not set to the site's public https address (Prolific sends "
        "events only to one); the sync alone keeps the campaign up to date"
    )


# --- the secret, sealed -------------------------------------------------------------------------
# The standard library has no AES and the project adds no dependency for one: HMAC-SHA256 as a
# keystream (counter mode over a random nonce), then an HMAC tag over nonce and ciphertext.


def _keys() -> tuple[bytes, bytes]:
    root = str(settings.WEBHOOK_SECRET_KEY).encode()
    derive = lambda purpose: hmac.new(root, f"prolific-hook-secret:{purpose}".encode(), hashlib.sha256).digest()  # noqa: E731
    return derive("encrypt"), derive("authenticate")


def _stream(key: bytes, nonce: bytes, length: int) -> bytes:
    blocks = (hmac.new(key, nonce + n.to_bytes(4, "big"), hashlib.sha256).digest() for n in range(length // 32 + 1))
    return b"".join(blocks)[:length]


def seal(value: str) -> str:
    encrypt, authenticate = _keys()
    nonce, data = secrets.token_bytes(_NONCE), value.encode()
    cipher = bytes(a ^ b for a, b in zip(data, _stream(encrypt, nonce, len(data)), strict=True))
    tag = hmac.new(authenticate, nonce + cipher, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(nonce + tag + cipher).decode()


def unseal(sealed: str) -> str | None:
    """The secret, or None when `sealed` is empty, altered or sealed under another key."""
    try:
        raw = base64.urlsafe_b64decode(sealed.encode())
    except ValueError:
        return None
    nonce, tag, cipher = raw[:_NONCE], raw[_NONCE : _NONCE + _TAG], raw[_NONCE + _TAG :]
    encrypt, authenticate = _keys()
    if not cipher or not hmac.compare_digest(tag, hmac.new(authenticate, nonce + cipher, hashlib.sha256).digest()):
        return None
    return bytes(a ^ b for a, b in zip(cipher, _stream(encrypt, nonce, len(cipher)), strict=True)).decode()


def secrets_in_use() -> list[str]:
    """Every Prolific workspace secret we hold (normally one), unsealed."""
    sealed = PlatformHook.objects.filter(platform=Publication.PROLIFIC).values_list("secret_sealed", flat=True)
    return [secret for secret in map(unseal, sealed) if secret]


def hook_state(target: str) -> str:
    """One line for the campaign page: whether events are on, never the secret."""
    if not target:
        return events_off_reason()
    hook = PlatformHook.objects.filter(platform=Publication.PROLIFIC, target_url=target).first()
    if hook is None:
        return "Prolific events: not set up yet (publishing sets them up); the sync keeps the campaign up to date"
    subscribed = ", ".join(sorted(hook.subscriptions)) or "none"
    return f"Prolific events on for {target}: {subscribed}" + (f" ({hook.note})" if hook.note else "")


class ProlificHooks:
    """The adapter's webhook calls (mixed into labeling.platforms.prolific.ProlificPlatform)."""

    def subscribe_events(self) -> str:
        """Secret and subscriptions for events_url(), as documented above; returns what the page says.
        A refusal is noted on the workspace's row and the sync goes on alone."""
        target = events_url()
        if not target:
            return events_off_reason()
        try:
            workspace = self._workspace_id()
        except PlatformError as error:
            return scrub(f"Prolific events not set up: {error}")
        hook, _ = PlatformHook.objects.get_or_create(platform=Publication.PROLIFIC, workspace_id=workspace)
        note = ""
        try:
            self._keep_secret(hook, workspace)
            self._subscribe(hook, workspace, target)
        except PlatformError as error:
            note = scrub(f"events not fully on: {error}", also=secrets_in_use())[:500]
        PlatformHook.objects.filter(pk=hook.pk).update(target_url=target, note=note)
        return hook_state(target)

    def _keep_secret(self, hook: PlatformHook, workspace: str) -> None:
        listed = self._hooks_call("list secrets", "GET", f"/hooks/secrets/?workspace_id={workspace}", True)[0]
        rows = listed.get("results") if isinstance(listed.get("results"), list) else list(listed.values())
        values = [row.get("value") for row in rows if isinstance(row, dict) and row.get("value")]
        if values:
            value = values[0]
        else:  # none in the workspace yet: made once (a lost answer leaves it to be listed next time)
            body = {"workspace_id": workspace}
            value = self._hooks_call("create secret", "POST", "/hooks/secrets/", False, body)[0].get("value") or ""
        if not value:
            raise PlatformError("Prolific answered no secret value for the workspace")
        if unseal(hook.secret_sealed) != value:
            PlatformHook.objects.filter(pk=hook.pk).update(secret_sealed=seal(value))

    def _subscribe(self, hook: PlatformHook, workspace: str, target: str) -> None:
        page = self._hooks_call("list subscriptions", "GET", f"/hooks/subscriptions/?workspace_id={workspace}", True)
        existing = {
            row.get("event_type"): row.get("id")
            for row in page[0].get("results") or []
            if row.get("target_url") == target and row.get("is_enabled", True)
        }
        confirmed = {kind: existing[kind] for kind in EVENT_TYPES if existing.get(kind)}
        for kind in EVENT_TYPES:
            if kind not in confirmed:
                confirmed[kind] = self._create_subscription(workspace, kind, target)
                PlatformHook.objects.filter(pk=hook.pk).update(subscriptions=confirmed)
        PlatformHook.objects.filter(pk=hook.pk).update(subscriptions=confirmed)

    def _create_subscription(self, workspace: str, kind: str, target: str) -> str:
        body = {"event_type": kind, "target_url": target, "workspace_id": workspace}
        answer, headers = self._hooks_call(f"subscribe to {kind}", "POST", "/hooks/subscriptions/", False, body)
        made = [answer] if answer.get("id") else answer.get("results") or []
        ids = [row.get("id") for row in made if row.get("event_type") == kind and row.get("target_url") == target]
        hook_secret = headers.get("X-Hook-Secret", "")
        if not ids or not ids[-1] or not hook_secret:
            raise PlatformError(f"Prolific's answer to a {kind} subscription lacks its id or X-Hook-Secret")
        path = f"/hooks/subscriptions/{ids[-1]}/"
        self._hooks_call(f"confirm {kind}", "POST", path, True, {"secret": hook_secret})
        return ids[-1]

    def _hooks_call(self, operation: str, method: str, path: str, repeatable: bool, json=None) -> tuple[dict, dict]:
        """One call, its JSON and its headers (the subscription's X-Hook-Secret travels in one)."""
        return self._request(operation, method, path, repeatable=repeatable, json=json, headers=True)
