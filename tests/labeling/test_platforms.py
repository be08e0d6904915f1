"""The platform layer's parts: the one call module (narrow retries, no secrets in logs), money and
the cost preview, the local adapter, the publish command. Nothing touches the network."""

import logging
from decimal import Decimal

import pytest
import requests
import responses
from botocore.exceptions import ClientError, ReadTimeoutError
from django.core.management import CommandError, call_command

from labeling.models import HIT, Campaign
from labeling.platforms import PlatformError, calls, get_platform, mturk, publish_campaign
from labeling.platforms.costs import cost_preview, money
from labeling.platforms.local import LocalPlatform
from labeling.platforms.prolific import API, ProlificPlatform
from tests.labeling.platform_helpers import slept

__all__ = ["slept"]


def aws_error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": f"{code} happened"}}, "SendBonus")


def failing(*errors):
    """A call that raises each error in turn, then answers "ok"."""
    queue = list(errors)

    def fn():
        if queue:
            raise queue.pop(0)
        return "ok"

    return fn


# --- calls: narrow retries ----------------------------------------------------------------------


def test_throttling_is_retried_with_growing_backoff(slept, settings):
    settings.PLATFORM_RETRY_BASE_SECONDS = 1.0
    fn = failing(aws_error("Throttling"), aws_error("ThrottlingException"))
    assert calls.call("mturk", "send_bonus", fn, repeatable=False) == "ok"
    assert len(slept) == 2 and slept[0] <= 1.0 and slept[1] <= 2.0


def test_an_error_with_an_unknown_outcome_is_retried_only_for_a_repeatable_call(slept):
    timeout = ReadTimeoutError(endpoint_url="https://mturk")
    assert calls.call("mturk", "list", failing(timeout), repeatable=True) == "ok"
    with pytest.raises(calls.PlatformCallError, match="ReadTimeoutError"):
        calls.call("mturk", "create", failing(ReadTimeoutError(endpoint_url="https://mturk")), repeatable=False)
    with pytest.raises(calls.PlatformCallError, match="ServiceFault"):
        calls.call("mturk", "create", failing(aws_error("ServiceFault")), repeatable=False)
    assert len(slept) == 1


def test_a_refusal_is_not_retried_and_keeps_the_platforms_code_and_message(slept):
    with pytest.raises(calls.PlatformCallError) as failure:
        calls.call("mturk", "approve_assignment", failing(aws_error("RequestError")), repeatable=True)
    assert (failure.value.code, failure.value.detail) == ("RequestError", "RequestError happened")
    assert slept == []


def test_retries_stop_after_the_configured_attempts(slept, settings):
    settings.PLATFORM_RETRY_ATTEMPTS = 3
    fn = failing(*[calls.PlatformHTTPError(429, "slow down")] * 5)
    with pytest.raises(calls.PlatformCallError, match="429"):
        calls.call("prolific", "list submissions", fn, repeatable=True)
    assert len(slept) == 2


def test_a_programming_error_is_not_a_platform_error(slept):
    with pytest.raises(KeyError):
        calls.call("mturk", "x", failing(KeyError("HIT")), repeatable=True)


def test_connect_timeouts_are_retried_even_for_a_pay_call(slept):
    fn = failing(requests.exceptions.ConnectTimeout("never connected"))
    assert calls.call("prolific", "pay bonuses", fn, repeatable=False) == "ok"
    with pytest.raises(calls.PlatformCallError):
        calls.call("prolific", "pay bonuses", failing(requests.exceptions.ReadTimeout("lost")), repeatable=False)


def test_the_prolific_token_never_reaches_the_logs(monkeypatch, slept, caplog, db):
    monkeypatch.setenv("PROLIFIC_API_TOKEN", "very-secret-token-value")
    caplog.set_level(logging.DEBUG)
    publication = type("P", (), {"external_id": "S1"})()
    with responses.RequestsMock() as mock:
        mock.get(f"{API}/studies/S1/submissions/", status=503, body="unavailable")
        with pytest.raises(calls.PlatformCallError):
            ProlificPlatform().fetch_results(publication)
        assert mock.calls[0].request.headers["Authorization"] == "Token very-secret-token-value"
    assert "prolific list submissions" in caplog.text and "very-secret" not in caplog.text


# --- money and the cost preview -----------------------------------------------------------------


def test_money_is_two_decimals_with_the_currencys_sign():
    assert money(Decimal("1.400000000000000"), "USD") == "$1.40"
    assert money("0.005", "GBP") == "£0.01"
    assert money(1234.5, "EUR") == "€1,234.50"
    assert money(None, "CHF") == "0.00 CHF"


def test_the_cost_preview_refuses_nonsense():
    with pytest.raises(ValueError):
        cost_preview(seats=3, reward=Decimal("0.4"), bonus=Decimal(0), bonus_share=Decimal(2), fee_rate=Decimal(0), currency="USD")  # fmt: skip


def test_mturk_charges_more_for_hits_of_ten_or_more_assignments(settings):
    assert mturk.fee_rate(9) == Decimal("0.2") and mturk.fee_rate(10) == Decimal("0.4")


# --- adapters and the command -------------------------------------------------------------------


def test_the_external_question_points_at_our_hit_url_escaped():
    xml = mturk.external_question("https://site.example/labeling/platform/mturk/?campaign=1&hit=2")
    assert "<ExternalURL>https://site.example/labeling/platform/mturk/?campaign=1&amp;hit=2</ExternalURL>" in xml
    assert "ExternalQuestion.xsd" in xml


def test_make_client_uses_the_sandbox_by_default_and_leaves_retries_to_us(monkeypatch):
    import boto3

    seen = {}
    monkeypatch.setattr(boto3, "client", lambda service, **options: seen.update(service=service, **options))
    mturk.make_client()
    assert seen["service"] == "mturk" and seen["endpoint_url"] == mturk.SANDBOX_ENDPOINT
    assert seen["config"].retries == {"total_max_attempts": 1}
    seen.clear()
    mturk.make_client(sandbox=False)
    assert "endpoint_url" not in seen


@pytest.fixture
def campaign(db):
    campaign = Campaign.objects.create(name="Publish me", reward=Decimal("0.45"), time_limit_minutes=30)
    for position in (1, 2):
        HIT.objects.create(campaign=campaign, position=position, required_workers=3)
    return campaign


def test_the_local_platform_names_hits_without_calling_out(campaign):
    assert publish_campaign(campaign, LocalPlatform(), "http://localhost:8000") == 2
    assert sorted(campaign.hits.values_list("external_id", flat=True)) == sorted(
        f"local:{pk}" for pk in campaign.hits.values_list("pk", flat=True)
    )
    assert LocalPlatform().cost_preview(campaign).fees == 0


def test_an_unknown_platform_is_an_error():
    with pytest.raises(PlatformError, match="unknown crowd platform 'upwork'"):
        get_platform("upwork")


def test_the_publish_command(campaign, capsys):
    call_command("publish_campaign", str(campaign.pk), "--base-url", "https://site.example")
    assert "published 2 HIT(s)" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no campaign 999"):
        call_command("publish_campaign", "999", "--base-url", "https://site.example")
