"""Task types as data: every type goes through the same claim / answer / submit / aggregate path,
and a third type (defined here, in the tests) needs only its module, its template and a register
line. Runs on PostgreSQL when DATABASE_URL names one."""

import pytest
from django.urls import reverse

from annotation.models import Label
from labeling import task_types
from labeling.actions import SubmissionRefused
from labeling.actions.answer import save_answer
from labeling.actions.claim import claim_next_hit
from labeling.actions.submit import submit_assignment
from labeling.crowd.majority import majority_vote
from labeling.crowd.win_rates import unshuffle, wilson_interval
from labeling.models import LAST_TURN_LABEL, Assignment, Campaign, HITItem, QuizQuestion, Response, Worker
from labeling.services.campaigns import CampaignRefused, create_campaign, create_pairwise_campaign, set_campaign_status
from labeling.task_types import AnswerRefused, TaskType, export_records
from labeling.task_types.pairwise import PAIRWISE, dialogue_of
from labeling.work.hits import build_hits, write_hits
from tests.labeling.hit_factory import make_dialogues

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

# --- a third task type, written the way docs/tasks/index.md "Adding a task type" says ---------

YES_NO = "test_is_question"
YES_NO_TEMPLATE = """<p class="the-turn">{{ text }}</p>
<label><input type="radio" name="choice" value="yes"{% if saved == "yes" %} checked{% endif %}> yes</label>
<label><input type="radio" name="choice" value="no"{% if saved == "no" %} checked{% endif %}> no</label>"""


class IsQuestion(TaskType):
    """Is this line a question? An item holds one line of text; the answer is yes or no."""

    name = YES_NO
    title = "Is this line a question?"
    template = "test_is_question.html"

    def screen_context(self, campaign, item, saved):
        return {"text": item.payload["text"], "saved": saved.get("choice", "")}

    def clean_answer(self, campaign, item, posted):
        if posted.get("choice") not in ("yes", "no"):
            raise AnswerRefused("Pick yes or no.")
        return {"choice": posted["choice"]}

    def quiz_correct(self, campaign, item, answer):
        return answer.get("choice") == item.quiz_question.gold["choice"]

    def aggregate(self, campaign):
        by_item: dict[int, list[str]] = {}
        for item_id, data in (
            Response.objects.filter(
                assignment__in=Assignment.objects.counted(), item__hit__campaign=campaign, item__quiz_question=None
            )
            .order_by("pk")
            .values_list("item_id", "data")
        ):
            by_item.setdefault(item_id, []).append(data["choice"])
        return {"majorities": {item: majority_vote(choices).label for item, choices in by_item.items()}}

    def export(self, campaign, fmt):
        records = [{"item": item, "majority": label} for item, label in self.aggregate(campaign)["majorities"].items()]
        return export_records(campaign, "answers", records, ["item", "majority"], fmt)


@pytest.fixture
def is_question_type(settings, tmp_path):
    (tmp_path / "test_is_question.html").write_text(YES_NO_TEMPLATE, encoding="utf-8")
    templates = [dict(engine) for engine in settings.TEMPLATES]
    templates[0]["DIRS"] = [*templates[0].get("DIRS", []), str(tmp_path)]
    settings.TEMPLATES = templates
    task_types.register(IsQuestion())
    yield task_types.get(YES_NO)
    task_types.unregister(YES_NO)


def _is_question_campaign() -> Campaign:
    campaign = create_campaign("Questions?", task_type=YES_NO, dialogues_per_hit=2, quiz_per_hit=1)
    quiz = QuizQuestion.objects.create(
        task_type=YES_NO, text="Are you there?", gold={"choice": "yes"}, source=QuizQuestion.GENERATED
    )
    write_hits(
        campaign,
        [
            [
                HITItem(payload={"text": "Where were you?"}),
                HITItem(payload={"text": "Are you there?"}, quiz_question=quiz),
                HITItem(payload={"text": "I was out."}),
            ]
        ],
    )
    return campaign


# --- helpers shared by the path test ------------------------------------------------------------


def _label_campaign() -> Campaign:
    campaign = create_campaign("Labels", dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=1)
    return campaign


def _pairwise_campaign(prefix: str = "", **settings) -> Campaign:
    a = make_dialogues(4, prefix=f"{prefix}a")
    b = make_dialogues(4, prefix=f"{prefix}b")
    values = {"dialogues_per_hit": 4, "quiz_per_hit": 2, "seed": 5, **settings}
    campaign, _ = create_pairwise_campaign(
        "Pairs",
        source_a="ids:" + ",".join(str(d.pk) for d in a),
        source_b="ids:" + ",".join(str(d.pk) for d in b),
        **values,
    )
    return campaign


def _right_answer(campaign: Campaign, item: HITItem, worker_index: int) -> dict:
    """What a worker posts: a right answer on quiz screens; otherwise a fixed rule per type."""
    if campaign.task_type == LAST_TURN_LABEL:
        return {"answer": item.quiz_question.gold_label.name if item.is_quiz else item.choices[0]}
    if campaign.task_type == PAIRWISE:
        keys = [q["key"] for q in campaign.task_config["questions"]]
        if item.is_quiz:
            side = "left" if item.payload["left_is"] == "a" else "right"  # the real dialogue is a
        else:  # workers 0 and 1 prefer source a, worker 2 prefers the left side
            side = ("left" if item.payload["left_is"] == "a" else "right") if worker_index < 2 else "left"
        return {f"q_{key}": side for key in keys}
    return {"choice": "yes" if item.is_quiz or worker_index < 2 else "no"}


CAMPAIGNS = {LAST_TURN_LABEL: _label_campaign, PAIRWISE: _pairwise_campaign, YES_NO: _is_question_campaign}


@pytest.mark.parametrize("kind", [LAST_TURN_LABEL, PAIRWISE, YES_NO])
def test_every_task_type_goes_through_the_same_claim_answer_submit_aggregate_path(kind, request, db):
    if kind == YES_NO:
        request.getfixturevalue("is_question_type")
    campaign = CAMPAIGNS[kind]()
    assert campaign.task_type == kind
    set_campaign_status(campaign, Campaign.OPEN)
    workers = [Worker.objects.create(external_id=f"w{i}") for i in range(4)]
    for index, worker in enumerate(workers[:3]):
        assignment = claim_next_hit(worker, campaign)
        assert assignment is not None and assignment.hit.campaign_id == campaign.pk
        for item in assignment.hit.items.select_related("quiz_question__gold_label"):
            save_answer(assignment, item, _right_answer(campaign, item, index), seconds_spent=3)
        result = submit_assignment(assignment)
        assert (result.quiz_correct, result.wrong) == (result.quiz_total, [])
        assert result.quiz_total >= 1
    assert claim_next_hit(workers[3], campaign) is None  # three workers per item, then full
    summary = task_types.of(campaign).aggregate(campaign)
    if kind == LAST_TURN_LABEL:
        assert (summary["items"], summary["majority"]) == (2, 2)
    elif kind == PAIRWISE:
        # 4 pairs x 3 judges; judges 1 and 2 always pick a, judge 3 the left side (a on some pairs)
        a_left = sum(1 for i in campaign.hits.get().items.filter(quiz_question=None) if i.payload["left_is"] == "a")
        assert summary["judgments"] == 4 * 3 * 3
        assert summary["engagingness_judgments"] == 12
        assert summary["engagingness_win_rate_a"] == round((8 + a_left) / 12, 4)
        interval = wilson_interval(8 + a_left, 12)
        assert summary["humanness_interval_a"] == [round(interval.low, 4), round(interval.high, 4)]
        assert summary["left_win_rate"] == round((2 * a_left + 4) / 12, 4)
    else:
        assert sorted(summary["majorities"].values()) == ["yes", "yes"]


def test_a_wrong_quiz_answer_is_scored_by_the_type_and_explained(db):
    campaign = _pairwise_campaign(dialogues_per_hit=4, quiz_per_hit=1)
    set_campaign_status(campaign, Campaign.OPEN)
    assignment = claim_next_hit(Worker.objects.create(external_id="w"), campaign)
    for item in assignment.hit.items.all():
        answer = _right_answer(campaign, item, 0)
        if item.is_quiz:  # the degenerate side, on every question
            answer = {key: "right" if side == "left" else "left" for key, side in answer.items()}
        save_answer(assignment, item, answer)
    result = submit_assignment(assignment)
    assert (result.quiz_correct, result.quiz_total) == (0, 1)
    wrong = result.wrong[0]
    real_side = "left" if assignment.hit.items.get(quiz_question__isnull=False).payload["left_is"] == "a" else "right"
    assert wrong.gold_label == f"the {real_side} dialogue on every question"
    assert "repeats" in wrong.explanation


def test_a_pairwise_answer_must_answer_every_question(db):
    campaign = _pairwise_campaign()
    set_campaign_status(campaign, Campaign.OPEN)
    assignment = claim_next_hit(Worker.objects.create(external_id="w"), campaign)
    item = assignment.hit.items.first()
    with pytest.raises(SubmissionRefused, match="still open: Interestingness"):
        save_answer(assignment, item, {"q_engagingness": "left", "q_humanness": "right"})
    with pytest.raises(SubmissionRefused, match="Engagingness"):
        save_answer(assignment, item, {"q_engagingness": "up", "q_interestingness": "left", "q_humanness": "left"})
    assert not Response.objects.filter(assignment=assignment).exists()


def test_sides_are_recorded_per_item_and_mixed(db):
    campaign = _pairwise_campaign(dialogues_per_hit=4, quiz_per_hit=0, seed=11)
    items = list(HITItem.objects.filter(hit__campaign=campaign))
    assert len(items) == 4
    a_ids = set(campaign.task_config["sources"]["a"].removeprefix("ids:").split(","))
    for item in items:
        assert item.payload["left_is"] in ("a", "b")
        assert str(dialogue_of(item.payload, "a")) in a_ids
        assert str(dialogue_of(item.payload, "b")) not in a_ids
    again = _rebuilt_sides(campaign)
    assert again == [item.payload["left_is"] for item in sorted(items, key=lambda i: (i.hit_id, i.position))]


def _rebuilt_sides(campaign):
    from labeling.crowd.pairing import Pair, place

    items = HITItem.objects.filter(hit__campaign=campaign).order_by("hit_id", "position")
    by_pair = {(dialogue_of(i.payload, "a"), dialogue_of(i.payload, "b")): i.payload["left_is"] for i in items}
    placed = {(p.pair.a, p.pair.b): p.left_is for p in place([Pair(a, b) for a, b in by_pair], 11)}
    return [placed[key] for key in by_pair]


def test_the_default_questions_are_acute_evals_and_the_wording_is_editable(db):
    campaign = _pairwise_campaign()
    wording = {q["key"]: q["wording"] for q in campaign.task_config["questions"]}
    assert list(wording) == ["engagingness", "interestingness", "humanness"]
    assert wording["engagingness"] == (
        "Who would you prefer to talk to? Which version is more likely to hold your attention "
        "and make you want to hear more?"
    )
    assert wording["interestingness"] == (
        "If you had to say one of these speakers is interesting and one is boring, who would you say is more "
        "interesting?"
    )
    assert wording["humanness"] == "Who would you say sounds more human? Which version is more natural and personable?"
    custom = _pairwise_campaign("c", questions=[{"key": "clarity", "title": "Clarity", "wording": "Which is clearer?"}])
    assert custom.task_config["questions"] == [{"key": "clarity", "title": "Clarity", "wording": "Which is clearer?"}]


def test_a_csv_naming_a_missing_dialogue_names_its_line_and_saves_nothing(db):
    a, b = make_dialogues(2, prefix="x")
    text = f"dialogue_a,dialogue_b\n{a.pk},{b.pk}\n{a.pk},999999\n"
    with pytest.raises(CampaignRefused) as refused:
        create_pairwise_campaign("CSV", pairs_csv=text, csv_name="upload.csv")
    assert refused.value.field == "pairs_csv"
    assert "upload.csv line 3: no dialogue with id 999999" in refused.value.message
    assert not Campaign.objects.exists()


def test_a_csv_of_pairs_makes_one_item_per_line(db):
    dialogues = make_dialogues(6, prefix="y")
    text = "\n".join(f"{dialogues[i].pk},{dialogues[i + 3].pk}" for i in range(3))
    campaign, hits = create_pairwise_campaign("CSV", pairs_csv=text, quiz_per_hit=0, dialogues_per_hit=10)
    payloads = [i.payload for i in HITItem.objects.filter(hit__campaign=campaign)]
    assert len(hits) == 1
    assert {(dialogue_of(p, "a"), dialogue_of(p, "b")) for p in payloads} == {
        (dialogues[i].pk, dialogues[i + 3].pk) for i in range(3)
    }


def test_sources_are_picked_by_label_source_or_model_version(db):
    from annotation.models import ModelVersion, TurnLabel

    bots = make_dialogues(3, prefix="bot")
    subs = make_dialogues(3, prefix="sub")
    label = Label.objects.filter(is_active=True).first()
    model = ModelVersion.objects.create(kind=ModelVersion.WEAK, name="m1", base_model="x")
    for dialogue in bots:
        TurnLabel.objects.create(turn=dialogue.turns.first(), label=label, source="botstalk", model_version=model)
    campaign, _ = create_pairwise_campaign(
        "Bots", source_a="source:botstalk", source_b="ids:" + ",".join(str(d.pk) for d in subs), quiz_per_hit=0
    )
    items = HITItem.objects.filter(hit__campaign=campaign)
    assert {dialogue_of(i.payload, "a") for i in items} == {d.pk for d in bots}
    campaign, _ = create_pairwise_campaign(
        "Models", source_a=f"model:{model.pk}", source_b="ids:" + ",".join(str(d.pk) for d in subs), quiz_per_hit=0
    )
    assert {dialogue_of(i.payload, "a") for i in HITItem.objects.filter(hit__campaign=campaign)} == {d.pk for d in bots}


@pytest.mark.parametrize(
    ("source_a", "field", "message"),
    [("corpus", "source_a", "is not a source"), ("movie:99999", "source_a", "holds no dialogue")],
)
def test_a_bad_source_is_refused_by_name(db, source_a, field, message):
    make_dialogues(2)
    with pytest.raises(CampaignRefused) as refused:
        create_pairwise_campaign("Bad", source_a=source_a, source_b="ids:1")
    assert refused.value.field == field and message in refused.value.message


def test_an_unknown_task_type_and_labels_on_a_pairwise_campaign_are_refused(db):
    with pytest.raises(CampaignRefused) as refused:
        create_campaign("X", task_type="essay")
    assert refused.value.field == "task_type"
    with pytest.raises(CampaignRefused) as refused:
        create_campaign("X", task_type=PAIRWISE, labels=list(Label.objects.all()[:3]))
    assert refused.value.field == "labels"
    with pytest.raises(CampaignRefused) as refused:
        create_campaign("X", task_type=PAIRWISE, task_config={"questions": [{"key": "Bad Key", "wording": "?"}]})
    assert refused.value.field == "questions"


def test_a_campaign_made_without_a_type_labels_the_last_turn(db):
    campaign = create_campaign("Old style")
    assert (campaign.task_type, task_types.of(campaign).uses_labels) == (LAST_TURN_LABEL, True)


def test_the_label_set_of_a_campaign_is_what_its_screens_offer_and_accept(db):
    labels = list(Label.objects.filter(name__in=["Angry", "Sad", "Joyful"]))
    campaign = create_campaign("Three labels", labels=labels, fallback_choices=["Angry", "Sad", "Joyful"])
    campaign.dialogues_per_hit, campaign.quiz_per_hit = 1, 0
    build_hits(campaign, make_dialogues(1), seed=1)
    set_campaign_status(campaign, Campaign.OPEN)
    assignment = claim_next_hit(Worker.objects.create(external_id="w"), campaign)
    item = assignment.hit.items.get()
    with pytest.raises(SubmissionRefused, match="no label called 'Nostalgic'"):
        save_answer(assignment, item, {"answer": "Nostalgic"})
    assert save_answer(assignment, item, {"answer": "Sad"}).label.name == "Sad"


# --- the pages ----------------------------------------------------------------------------------


def _staff(django_user_model):
    return django_user_model.objects.create_user("prof", password="x", is_staff=True)


def test_the_pairwise_screen_shows_both_dialogues_and_nothing_of_their_sources(db, client, django_user_model):
    campaign = _pairwise_campaign(quiz_per_hit=2)
    set_campaign_status(campaign, Campaign.OPEN)
    user = django_user_model.objects.create_user("ann", password="x")
    client.force_login(user)
    client.post(reverse("labeling:claim"), {"campaign": campaign.pk})
    assignment = Assignment.objects.get(worker__user=user)
    for item in assignment.hit.items.order_by("position"):
        page = client.get(reverse("labeling:assignment_item", args=[assignment.pk, item.position])).content.decode()
        left = _side_texts(item.payload["left"])
        right = _side_texts(item.payload["right"])
        assert page.index(left[0]) < page.index(right[-1])  # left column first
        for text in left + right:
            assert text.replace("'", "&#x27;") in page
        for secret in ("left_is", "ids:", "source a", "source b", "payload", "better", "quiz", "degenerate"):
            assert secret not in page.lower()
        for dialogue_id in (item.payload["left"].get("dialogue"), item.payload["right"].get("dialogue")):
            assert f"dialogue {dialogue_id}" not in page.lower()
        for question in campaign.task_config["questions"]:
            assert question["wording"] in page


def _side_texts(side):
    from labeling.task_types.pairwise import side_turns

    return side_turns(side)


def test_the_pairwise_screen_saves_answers_and_needs_them_all_before_next(db, client, django_user_model):
    campaign = _pairwise_campaign(quiz_per_hit=0)
    set_campaign_status(campaign, Campaign.OPEN)
    user = django_user_model.objects.create_user("ann", password="x")
    client.force_login(user)
    client.post(reverse("labeling:claim"), {"campaign": campaign.pk})
    assignment = Assignment.objects.get(worker__user=user)
    url = reverse("labeling:answer_item", args=[assignment.pk, 1])
    response = client.post(url, {"go": "next", "q_engagingness": "left"}, HTTP_HX_REQUEST="true")
    assert "still open: Interestingness" in response.content.decode()
    full = {"q_engagingness": "left", "q_interestingness": "right", "q_humanness": "left"}
    response = client.post(url, {"go": "stay", **full}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "Saved" in response.content.decode()
    assert Response.objects.get(assignment=assignment).data == {
        "engagingness": "left",
        "interestingness": "right",
        "humanness": "left",
    }
    page = client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1])).content.decode()
    assert 'name="q_interestingness" value="right" checked' in page
    response = client.post(url, {"go": "next"})
    assert response.status_code == 302 and response.url.endswith("/2/")


def test_the_test_type_renders_with_its_own_template(db, client, django_user_model, is_question_type):
    campaign = _is_question_campaign()
    set_campaign_status(campaign, Campaign.OPEN)
    user = django_user_model.objects.create_user("ann", password="x")
    client.force_login(user)
    client.post(reverse("labeling:claim"), {"campaign": campaign.pk})
    assignment = Assignment.objects.get(worker__user=user)
    page = client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1])).content.decode()
    assert '<p class="the-turn">Where were you?</p>' in page
    response = client.post(reverse("labeling:answer_item", args=[assignment.pk, 1]), {"go": "next", "choice": "no"})
    assert response.status_code == 302
    assert Response.objects.get(assignment=assignment).data == {"choice": "no"}


def test_a_researcher_creates_a_pairwise_campaign_from_the_form_with_a_csv(db, client, django_user_model):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(_staff(django_user_model))
    dialogues = make_dialogues(4, prefix="f")
    good = f"{dialogues[0].pk},{dialogues[1].pk}\n{dialogues[2].pk},{dialogues[3].pk}\n".encode()
    form = {
        "name": "Form pairs",
        "language": "en",
        "count": 100,
        "seed": 3,
        "dialogues_per_hit": 10,
        "quiz_per_hit": 1,
        "workers_per_hit": 3,
        "reward": "0.40",
        "bonus": "0.10",
        "quiz_pass_mark": 1,
        "time_limit_minutes": 30,
        "wording_engagingness": "Which one would you rather keep talking to?",
        "wording_interestingness": "Which is more interesting?",
        "wording_humanness": "Which sounds more human?",
    }
    bad = client.post(
        reverse("labeling:campaign_create_pairwise"),
        {**form, "pairs_csv": SimpleUploadedFile("p.csv", b"1,2\nfoo,3\n")},
    )
    assert bad.status_code == 200 and "p.csv line 2: &#x27;foo&#x27; is not a dialogue id" in bad.content.decode()
    assert not Campaign.objects.exists()
    response = client.post(
        reverse("labeling:campaign_create_pairwise"), {**form, "pairs_csv": SimpleUploadedFile("p.csv", good)}
    )
    campaign = Campaign.objects.get()
    assert response.status_code == 302 and campaign.task_type == PAIRWISE
    assert campaign.task_config["questions"][0]["wording"] == "Which one would you rather keep talking to?"
    assert HITItem.objects.filter(hit__campaign=campaign).count() == 3  # two pairs and a quiz pair


def test_the_results_page_and_exports_show_unshuffled_win_rates(db, client, django_user_model):
    campaign = _pairwise_campaign(quiz_per_hit=0, workers_per_hit=1)
    set_campaign_status(campaign, Campaign.OPEN)
    worker = Worker.objects.create(external_id="judge-1")
    assignment = claim_next_hit(worker, campaign)
    for item in assignment.hit.items.all():  # always the left side, whichever source it is
        save_answer(assignment, item, {"q_engagingness": "left", "q_interestingness": "left", "q_humanness": "left"})
    submit_assignment(assignment)
    a_left = sum(1 for i in assignment.hit.items.all() if i.payload["left_is"] == "a")
    client.force_login(_staff(django_user_model))
    page = client.get(reverse("labeling:campaign_results", args=[campaign.pk])).content.decode()
    assert "The left side won 12 of 12 judgments" in page
    assert f"<td>{a_left}</td><td>{4 - a_left}</td>" in page
    exported = _downloaded(client, reverse("labeling:campaign_export", args=[campaign.pk, "csv"]))
    rows = exported.strip().splitlines()
    assert rows[0] == "item,hit,worker,question,picked_side,left_is,winner,dialogue_a,dialogue_b,interface_language"
    assert len(rows) == 1 + 12
    for row in rows[1:]:
        _, _, _, _, side, left_is, winner, _, _, language = row.split(",")
        assert (side, winner) == ("left", unshuffle("left", left_is))
        assert language == "en"  # saved outside a request: the default language, LANGUAGE_CODE
    jsonl = _downloaded(client, reverse("labeling:campaign_export", args=[campaign.pk, "jsonl"]))
    assert len(jsonl.strip().splitlines()) == 12
    assert client.get(reverse("labeling:campaign_export", args=[campaign.pk, "xlsx"])).status_code == 404
    detail = client.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert reverse("labeling:campaign_results", args=[campaign.pk]) in detail
    report = client.get(reverse("labeling:campaign_report", args=[campaign.pk]))
    assert report.status_code == 200  # the shared dashboard works for every type


def test_the_api_creates_a_pairwise_campaign_and_reads_its_results(db, client, django_user_model):
    client.force_login(_staff(django_user_model))
    a, b = make_dialogues(2, prefix="api")
    response = client.post(
        "/api/campaigns/pairwise/",
        {"name": "API pairs", "pairs_csv": f"{a.pk},{b.pk}\n", "quiz_per_hit": 0},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    campaign_id = response.json()["id"]
    assert response.json()["task_type"] == PAIRWISE
    bad = client.post(
        "/api/campaigns/pairwise/", {"name": "Bad", "pairs_csv": "1,x\n"}, content_type="application/json"
    )
    assert bad.status_code == 400 and "line 1" in bad.json()["pairs_csv"][0]
    results = client.get(f"/api/campaigns/{campaign_id}/results/").json()
    assert results["judgments"] == 0 and results["engagingness_win_rate_a"] is None


def test_the_command_creates_a_pairwise_campaign(db, tmp_path, capsys):
    from django.core.management import CommandError, call_command

    a, b = make_dialogues(2, prefix="cli")
    path = tmp_path / "pairs.csv"
    path.write_text(f"{a.pk},{b.pk}\n{a.pk},0\n", encoding="utf-8")
    with pytest.raises(CommandError, match="line 2"):
        call_command("create_pairwise_campaign", "CLI", "--pairs-csv", str(path), "--quiz-per-hit", "0")
    path.write_text(f"{a.pk},{b.pk}\n", encoding="utf-8")
    call_command("create_pairwise_campaign", "CLI", "--pairs-csv", str(path), "--quiz-per-hit", "0")
    assert '"hits": 1' in capsys.readouterr().out
    assert Campaign.objects.get().task_type == PAIRWISE


def test_two_movies_can_be_compared(tiny_corpus):
    night, harbour = tiny_corpus[0].movie_id, tiny_corpus[1].movie_id
    campaign, _ = create_pairwise_campaign(
        "Films", source_a=f"movie:{night}", source_b=f"movie:{harbour}", quiz_per_hit=1
    )
    items = HITItem.objects.filter(hit__campaign=campaign, quiz_question=None)
    assert {dialogue_of(i.payload, "a") for i in items} <= {d.pk for d in tiny_corpus if d.movie_id == night}
    assert {dialogue_of(i.payload, "b") for i in items} <= {d.pk for d in tiny_corpus if d.movie_id == harbour}
    assert items.count() == 2
    assert campaign.task_config["sources"] == {"a": f"movie:{night}", "b": f"movie:{harbour}"}


def test_an_annotator_walks_a_pairwise_hit_to_the_end_and_submits(db, client, django_user_model):
    campaign = _pairwise_campaign(quiz_per_hit=1)
    set_campaign_status(campaign, Campaign.OPEN)
    user = django_user_model.objects.create_user("ann", password="x")
    client.force_login(user)
    client.post(reverse("labeling:claim"), {"campaign": campaign.pk})
    assignment = Assignment.objects.get(worker__user=user)
    items = list(assignment.hit.items.order_by("position"))
    for item in items:
        posted = {"go": "next", **_right_answer(campaign, item, 0)}
        response = client.post(reverse("labeling:answer_item", args=[assignment.pk, item.position]), posted)
        assert response.status_code == 302
    assert response.url == reverse("labeling:assignment_review", args=[assignment.pk])
    review = client.get(response.url).content.decode()
    assert f"{len(items)} of {len(items)} dialogues answered" in review and "engagingness: " in review
    client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    assignment.refresh_from_db()
    assert (assignment.status, assignment.quiz_correct) == (Assignment.SUBMITTED, 1)
    assert client.get(reverse("labeling:assignment_feedback", args=[assignment.pk])).status_code == 200


def _downloaded(client, url: str) -> str:
    """A streamed download's text (the export is never one string on the server)."""
    response = client.get(url)
    assert response.status_code == 200 and response.streaming
    return b"".join(response.streaming_content).decode()


def test_an_export_reads_its_records_only_as_it_is_streamed():
    read = []

    def records():
        for n in range(3):
            read.append(n)
            yield {"item": n, "majority": "=cmd" if n == 2 else "Sad"}

    campaign = Campaign(pk=7)
    export = export_records(campaign, "answers", records(), ["item", "majority"], "csv")
    assert read == [] and export.filename == "campaign-7-answers.csv"
    assert export.text == "item,majority\r\n0,Sad\r\n1,Sad\r\n2,'=cmd\r\n" and read == [0, 1, 2]
    jsonl = export_records(campaign, "answers", records(), ["item", "majority"], "jsonl")
    assert jsonl.text.count("\n") == 3
    with pytest.raises(ValueError, match="unknown export format"):
        export_records(campaign, "answers", records(), ["item"], "xlsx")
