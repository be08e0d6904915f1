"""Stateful stand-ins for the crowd platforms: Prolific (`prolific.ProlificStandIn`) and MTurk
(`mturk.MTurkStandIn`), each holding its platform's documented states, transitions, refusals and
own actions, with faults injected per call (`faults.FaultPlan`). `crowd.StudyRun` drives whole
studies through them (tests/labeling/test_platform_study_*.py, bench/platform_soak.py).
`prolific_hooks.HookedProlificStandIn` adds Prolific's webhooks: subscriptions and signed deliveries,
lost, repeated or reordered, which `crowd.StudyRun.deliver_events` posts to our receiving page.

They live in the product, not under tests/, so that the soak bench and a demo can run against
them (PLATFORM_STANDIN=1: every adapter talks to one process-wide stand-in instead of the
network; state lasts as long as the process). They are plugged in at the adapters' one transport
point (labeling.platforms.prolific.make_session, labeling.platforms.mturk.make_client): `install`
puts one there; nothing else changes. Pure: no Django import here or in prolific/mturk/faults.
"""

from labeling.platforms.standin.faults import FaultPlan
from labeling.platforms.standin.mturk import MTurkStandIn
from labeling.platforms.standin.prolific import ProlificStandIn

__all__ = ["FaultPlan", "MTurkStandIn", "ProlificStandIn", "install", "installed", "shared", "uninstall"]

_installed: dict[str, object] = {}
_shared: dict[str, object] = {}


def install(standin: ProlificStandIn | MTurkStandIn) -> None:
    """Point the adapters of the stand-in's platform at it (until `uninstall`)."""
    _installed["prolific" if isinstance(standin, ProlificStandIn) else "mturk"] = standin


def uninstall() -> None:
    _installed.clear()


def installed(platform: str):
    """The stand-in installed for `platform` ("prolific" or "mturk"), or None."""
    return _installed.get(platform)


def shared(platform: str):
    """The process-wide stand-in of `platform`, made on first use (PLATFORM_STANDIN's local mode)."""
    if platform not in _shared:
        _shared[platform] = ProlificStandIn() if platform == "prolific" else MTurkStandIn()
    return _shared[platform]
