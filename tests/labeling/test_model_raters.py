"""Models as raters: a chat model behind an OpenAI-compatible endpoint, tested against a stateful
stand-in server on 127.0.0.1 (timeouts, 429 with Retry-After, malformed answers, a label outside
the set: each a per-item record, never a crash); a model version through its predictions; the
figures against the crowd's gold, by hand."""

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotation.models import Dialogue, Label, ModelVersion, Prediction
from labeling.crowd.rater_agreement import cohen_kappa, expected_calibration_error, rater_agreement
from labeling.models import Campaign, RaterAnswer
from labeling.reports.study import build_report, to_markdown
from labeling.services.raters.endpoint import Endpoint, chat
from labeling.services.raters.prompt import Example, build_messages, read_answer
from labeling.services.raters.rate import rate_with_endpoint, rate_with_model_version
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

KEY = "sk-test-never-logged"


class StandIn:
    """A chat-completions endpoint with state: per dialogue (found by a word in its last turn) what
    it does, how often it was called, and the tokens it charged."""

    def __init__(self):
        self.calls: dict[str, int] = {}
        self.authorizations: set[str] = set()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _handler(self):
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.authorizations.add(self.headers.get("Authorization", ""))
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "no such path"}})
                last = body["messages"][-1]["content"]
                word = next(
                    (w for w in ("SLOW", "BUSYONCE", "BUSY", "GARBAGE", "NOCHOICE", "BANANAS") if w in last), ""
                )
                stand_in.calls[word] = stand_in.calls.get(word, 0) + 1
                return stand_in.respond(self, word, stand_in.calls[word], last)

            def _send(self, status, payload, headers=()):
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(raw)))
                try:
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout case)

        return Handler

    def respond(self, handler, word: str, call: int, last: str):
        if word == "SLOW":
            time.sleep(0.6)
        if word == "BUSY" or (word == "BUSYONCE" and call == 1):
            return handler._send(429, {"error": {"message": "rate limit"}}, [("Retry-After", "0")])
        if word == "GARBAGE":
            return handler._send(200, b"<html>upstream error</html>")
        if word == "NOCHOICE":
            return handler._send(200, {"choices": []})
        label = "Bananas" if word == "BANANAS" else ("Sad" if "sad" in last else "Angry")
        completion = {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": f" {label}."}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 2, "total_tokens": 42},
        }
        return handler._send(200, completion)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stand_in():
    server = StandIn()
    yield server
    server.close()


def _endpoint(stand_in, timeout=5.0, retries=2):
    return Endpoint(url=stand_in.url, model="stand-in-chat", key=KEY, timeout=timeout, max_retries=retries)


MESSAGES = [{"role": "user", "content": "A: hello"}]


def test_an_answer_with_its_tokens(stand_in):
    reply = chat(_endpoint(stand_in), MESSAGES)
    assert (reply.status, reply.content.strip(), reply.calls) == ("ok", "Angry.", 1)
    assert (reply.prompt_tokens, reply.completion_tokens) == (40, 2)
    assert stand_in.authorizations == {f"Bearer {KEY}"}


@pytest.mark.parametrize(
    ("word", "status", "calls", "detail"),
    [
        ("SLOW", "timeout", 2, "no answer within 0.3 s"),
        ("BUSY", "rate-limited", 2, "HTTP 429"),
        ("BUSYONCE", "ok", 2, ""),
        ("GARBAGE", "malformed", 1, "not a chat completion: <html>"),
        ("NOCHOICE", "malformed", 1, "not a chat completion"),
    ],
)
def test_each_fault_is_a_record_not_a_crash(stand_in, word, status, calls, detail):
    waits = []
    reply = chat(_endpoint(stand_in, timeout=0.3, retries=1), [{"role": "user", "content": word}], sleep=waits.append)
    assert (reply.status, reply.calls) == (status, calls)
    assert detail in reply.detail
    if word.startswith("BUSY"):
        assert waits == [0.0]  # the Retry-After header's seconds


def test_a_refused_connection_is_an_http_error():
    reply = chat(Endpoint("http://127.0.0.1:9/v1", "m", KEY, 0.5, 0), MESSAGES)
    assert reply.status == "http-error" and KEY not in reply.detail


def test_the_prompt_and_the_answer_reading():
    messages = build_messages(["Angry", "Sad"], [Example(("Hi", "You broke it!"), "Angry")], ("I miss her.",))
    assert "exactly one label from this list and nothing else: Angry, Sad." in messages[0]["content"]
    assert messages[1:] == [
        {"role": "user", "content": "A: Hi\nB: You broke it!"},
        {"role": "assistant", "content": "Angry"},
        {"role": "user", "content": "A: I miss her."},
    ]
    assert read_answer(' "sad". ', ["Angry", "Sad"]).label == "Sad"
    assert read_answer("Bananas", ["Angry", "Sad"]).outside == "Bananas"
    assert read_answer("I think it is\nsad, or angry", ["Angry", "Sad"]) == type(read_answer("", []))(None, None)


def test_figures_of_one_rater_by_hand():
    rater = ["A", "A", "B", "B", "A"]
    gold = ["A", "B", "B", "B", "A"]
    # observed 4/5; rater shares A 3/5, B 2/5; gold A 2/5, B 3/5: expected 6/25 + 6/25 = 12/25
    # Cohen's kappa (4/5 - 12/25) / (13/25) = 8/13
    assert cohen_kappa(rater, gold) == pytest.approx(8 / 13) == pytest.approx(cohen_kappa_score(rater, gold))
    figures = rater_agreement(rater, gold, [0.9, 0.9, 0.6, 0.6, None])
    assert figures.accuracy == 0.8 and figures.confusion == [[2, 0], [1, 2]]
    # AC1: pi_A = (3 + 2) / 10 = 1/2, Pe = 2 * 1/4 / 1 = 1/2 -> (4/5 - 1/2) / (1/2) = 3/5
    assert figures.ac1 == pytest.approx(3 / 5)
    # ECE: bin 0.9 holds 2 items, 1 right: |0.5 - 0.9| ; bin 0.6 holds 2, both right: |1 - 0.6|; (2*0.4 + 2*0.4)/4
    assert figures.calibration_error == pytest.approx(0.4)
    assert expected_calibration_error([], []) is None


@pytest.fixture
def campaign_with_gold(db):
    campaign = Campaign.objects.create(name="Rated", workers_per_hit=3)
    workers = make_workers(3)
    d = make_dialogues(8)
    answers = {dialogue: ["Angry", "Angry", "Sad"] for dialogue in d[:4]} | {
        dialogue: ["Sad", "Sad", "Angry"] for dialogue in d[4:]
    }
    make_answered_hit(campaign, workers, answers)
    aggregate_campaign(campaign)
    return campaign, d


def _mark(dialogue, text):
    turn = dialogue.turns.order_by("-position").first()
    turn.text = text
    turn.save()
    return turn


def test_an_endpoint_rater_labels_a_campaign_through_the_stand_in(campaign_with_gold, stand_in, settings, caplog):
    campaign, d = campaign_with_gold
    settings.MODEL_RATER_FEW_SHOT = 2
    for dialogue in d[4:]:
        _mark(dialogue, "so sad")
    faults = {1: "SLOW", 2: "GARBAGE", 3: "BANANAS", 5: "BUSYONCE"}
    caplog.set_level(logging.DEBUG)
    for index, word in faults.items():
        _mark(d[index], f"sad {word}" if index >= 4 else word)
    result = rate_with_endpoint(campaign, _endpoint(stand_in, timeout=0.3, retries=1), sleep=lambda s: None)
    rows = {row.turn.dialogue_id: row for row in RaterAnswer.objects.filter(campaign=campaign)}
    assert result["few_shot"] == 2 and result["items"] == 6 == len(rows)  # the few-shot items are not rated
    statuses = {dialogue.pk: rows[dialogue.pk].status for dialogue in d if dialogue.pk in rows}
    for index, expected in {1: "timeout", 2: "malformed", 3: "outside", 5: "ok"}.items():
        if d[index].pk in statuses:
            assert statuses[d[index].pk] == expected
    assert "Bananas" in "".join(r.detail for r in rows.values() if r.status == "outside") or d[3].pk not in rows
    ok = [r for r in rows.values() if r.status == "ok"]
    assert ok and all(
        r.calls >= 1 and r.prompt_tokens == 40 and r.completion_tokens == 2 and r.seconds >= 0 for r in ok
    )
    assert KEY not in caplog.text and KEY not in "".join(r.detail for r in rows.values())
    # a second run asks again only what has no ok answer
    before = dict(stand_in.calls)
    rate_with_endpoint(campaign, _endpoint(stand_in, timeout=0.3, retries=0), sleep=lambda s: None)
    assert sum(stand_in.calls.values()) - sum(before.values()) == len(rows) - len(ok)
    figures = build_report(campaign, resamples=20).model_raters[0]
    assert figures["rater"] == "endpoint:stand-in-chat" and figures["statuses"]["ok"] == len(ok)
    assert figures["accuracy"] == 1.0  # the stand-in says Sad exactly where the crowd's gold is Sad
    # workers 1 and 2 always in the majority, worker 3 never: accuracies 1, 1, 0 -> median 1
    assert figures["humans"]["workers"] == 3 and figures["humans"]["accuracy"] == 1.0
    assert "endpoint:stand-in-chat" in to_markdown(build_report(campaign, resamples=20))


def test_a_model_version_rates_through_its_predictions(campaign_with_gold):
    campaign, d = campaign_with_gold
    Dialogue.objects.filter(pk__in=[x.pk for x in d]).update(split="test")  # all held out: see the next test
    version = ModelVersion.objects.create(kind=ModelVersion.DIALOGUE, name="ours", base_model="minilm")
    angry, sad = Label.objects.get(name="Angry"), Label.objects.get(name="Sad")
    # gold: Angry on d0..d3, Sad on d4..d7; the model says Angry on d0..d5 (two wrong), nothing on d6, d7
    for index, dialogue in enumerate(d[:6]):
        turn = dialogue.turns.order_by("-position").first()
        Prediction.objects.create(turn=turn, model_version=version, label=angry if index < 6 else sad, confidence=0.75)
    result = rate_with_model_version(campaign, version)
    assert result["statuses"] == {"ok": 6, "no-prediction": 2}
    figures = build_report(campaign, resamples=20).model_raters[0]
    assert figures["items"] == 6 and figures["accuracy"] == pytest.approx(4 / 6)
    # all six answers at 0.75 in one bin, 4/6 right: ECE |4/6 - 0.75| = 1/12
    assert figures["calibration_error"] == pytest.approx(1 / 12)
    assert figures["confusion"] == {"labels": ["Angry", "Sad"], "counts": [[4, 0], [2, 0]]}
    assert figures["gold_changed"] >= 0 and figures["dawid_skene_accuracy"] is not None


def _predict(version, dialogues, label):
    for dialogue in dialogues:
        turn = dialogue.turns.order_by("-position").first()
        Prediction.objects.create(turn=turn, model_version=version, label=Label.objects.get(name=label), confidence=0.9)


def test_a_model_trained_on_the_gold_is_scored_on_held_out_items_only(campaign_with_gold, client, researcher):
    """A dialogue classifier that learned d0..d5 (train split) by heart and gets the test split
    wrong: its headline is the held-out figure, beside the humans on the same items; its training
    items are reported apart and never as a win over the humans."""
    campaign, d = campaign_with_gold
    splits = ["train"] * 3 + ["validation"] + ["test"] * 4
    for dialogue, split in zip(d, splits, strict=True):
        Dialogue.objects.filter(pk=dialogue.pk).update(split=split)
    version = ModelVersion.objects.create(kind=ModelVersion.DIALOGUE, name="memoriser", base_model="minilm")
    _predict(version, d[:4], "Angry")  # gold Angry on d0..d3: all right (train, validation)
    _predict(version, d[4:6], "Angry")  # gold Sad: wrong (test)
    _predict(version, d[6:], "Sad")  # right (test)
    rate_with_model_version(campaign, version)
    figures = build_report(campaign, resamples=20).model_raters[0]
    assert figures["exposure"] == "gold"
    assert (figures["items"], figures["accuracy"]) == (4, 0.5)  # the test split only
    roles = figures["by_role"]
    assert (roles["training"]["items"], roles["training"]["accuracy"]) == (3, 1.0)
    assert (roles["validation"]["items"], roles["held-out"]["items"]) == (1, 4)
    # workers 1 and 2 in every majority, worker 3 never: on the held-out items as on all
    assert figures["humans"]["workers"] == 3 and figures["humans"]["accuracy"] == 1.0
    report = to_markdown(build_report(campaign, resamples=20))
    assert "| model-version:" in report and "held-out (test split) | 4 | 0.500" in report
    assert "training (train split; not a measure) | 3 | 1.000" in report
    client.force_login(researcher)
    page = client.get(reverse("labeling:study_report", args=[campaign.pk])).content.decode()
    assert "seen in training" in page and "trained on the crowd gold of the train split" in page


def test_an_endpoint_model_whose_training_data_is_unknown_is_not_called_held_out(campaign_with_gold):
    campaign, d = campaign_with_gold
    for dialogue in d:
        turn = dialogue.turns.order_by("-position").first()
        RaterAnswer.objects.create(
            campaign=campaign, rater="endpoint:chat", turn=turn, label_text="Angry", status=RaterAnswer.OK
        )
    figures = build_report(campaign, resamples=20).model_raters[0]
    assert figures["exposure"] == "unknown" and set(figures["by_role"]) == {"unknown"}
    assert figures["items"] == 8 and figures["accuracy"] == 0.5


def test_the_job_rates_through_the_configured_endpoint_and_the_page_queues_it(
    campaign_with_gold, stand_in, settings, client, researcher
):
    from jobs.models import JobRun
    from labeling.jobs import model_rater_job

    campaign, _ = campaign_with_gold
    settings.MODEL_RATER_ENDPOINT_URL, settings.MODEL_RATER_MODEL, settings.MODEL_RATER_API_KEY = (
        stand_in.url,
        "chat",
        KEY,
    )
    settings.MODEL_RATER_FEW_SHOT = 0
    job = JobRun.objects.create(kind="labeling.model_rater", parameters={"campaign_id": campaign.pk})
    result = model_rater_job(job, campaign_id=campaign.pk)
    assert result == {"rater": "endpoint:chat", "items": 8, "few_shot": 0, "statuses": {"ok": 8}}
    client.force_login(researcher)
    url = reverse("labeling:study_report_rate", args=[campaign.pk])
    assert client.post(url, {"model_version": "nope"}).status_code == 400
    response = client.post(url, {"model_version": ""}, follow=True)
    assert "Model rater queued as job" in response.content.decode()
    assert JobRun.objects.filter(kind="labeling.model_rater").count() == 2
    settings.MODEL_RATER_ENDPOINT_URL = ""
    refused = client.post(url, {"model_version": ""}, follow=True).content.decode()
    assert "No endpoint configured" in refused


def test_the_benchs_seat_agreement_by_hand():
    from labeling.crowd.rater_agreement import seat_agreement

    answers = [["A", "A", "B"], ["A", "A", "A"], ["A", "B", "C"], ["B", "B", "A (Other)"]]
    figures = seat_agreement(answers, ["A", "B", "A", "B"])
    # majority items 1, 2, 4 (A, A, B): the model says A, B, B -> 2 of 3
    assert (figures.majority_items, figures.model_agreement) == (3, pytest.approx(2 / 3))
    # model A, B, B against A, A, B: observed 2/3, expected 1/3*2/3 + 2/3*1/3 = 4/9 -> (2/9) / (5/9) = 2/5
    assert figures.model_kappa == pytest.approx(2 / 5)
    # pairs whose two others agree: item 1 worker 3 (others A, said B), item 2 x3 (A, said A),
    # item 4 worker 3 (others B, said "A (Other)"): 3 of 5; the model in those seats: A, B, B, B, B -> 2 of 5
    assert (figures.worker_pairs, figures.worker_agreement, figures.paired_model_agreement) == (5, 0.6, 0.4)


def test_the_page_lists_the_items_a_rater_could_not_label(campaign_with_gold, stand_in, client, researcher, settings):
    campaign, d = campaign_with_gold
    settings.MODEL_RATER_FEW_SHOT, settings.STUDY_REPORT_RESAMPLES = 0, 20
    _mark(d[0], "GARBAGE")
    rate_with_endpoint(campaign, _endpoint(stand_in), sleep=lambda s: None)
    client.force_login(researcher)
    page = client.get(reverse("labeling:study_report", args=[campaign.pk])).content.decode()
    assert "An answer that names no label" in page and "not a chat completion" in page
    assert "endpoint:stand-in-chat" in page and KEY not in page
