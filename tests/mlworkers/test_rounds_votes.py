"""The rounds learn from every worker's answer: the campaigns' aggregated votes become soft targets
for the gold, and the training-split dialogues the crowd left without a majority join training on
their votes alone (never validation or test ones, never as candidates for SBERT or self labels)."""

from unittest import mock

import pytest

from annotation.models import Dialogue, TurnLabel
from labeling.models import AggregatedLabel
from labeling.services.campaigns import create_campaign
from mlworkers import gold
from mlworkers.ml.classifier import dialogue_classifier as dc
from mlworkers.ml.classifier.model import TrainConfig
from mlworkers.ml.rounds import self_labeling as rounds_core
from mlworkers.rounds import self_labeling as rounds
from tests.mlworkers.pipeline_support import add_crowd_label, last_turn, make_corpus


def _aggregated(campaign, dialogue, votes: dict[str, int]) -> AggregatedLabel:
    winner = max(votes, key=votes.get) if max(votes.values()) >= 2 else None
    return AggregatedLabel.objects.create(
        campaign=campaign,
        dialogue=dialogue,
        turn=last_turn(dialogue),
        label_text=winner or "",
        status=AggregatedLabel.MAJORITY if winner else AggregatedLabel.UNRESOLVED,
        votes=votes,
        answer_count=sum(votes.values()),
    )


@pytest.fixture
def voted(db):
    dialogues = make_corpus()
    Dialogue.objects.filter(pk__in=[d.pk for d in dialogues[:4]]).update(split=TurnLabel.TRAIN)
    Dialogue.objects.filter(pk=dialogues[4].pk).update(split=TurnLabel.VALIDATION)
    campaign = create_campaign("votes")
    add_crowd_label(dialogues[0], "Excited")
    _aggregated(campaign, dialogues[0], {"Excited": 2, "Joyful": 1})
    _aggregated(campaign, dialogues[1], {"Joyful": 1, "Content": 1, "a typed answer": 1})  # no majority
    _aggregated(campaign, dialogues[2], {"a typed answer": 2, "something else": 1})  # nothing among the labels
    _aggregated(campaign, dialogues[4], {"Neutral": 1, "Sad": 1, "Angry": 1})  # validation: never trains
    return dialogues, campaign


def test_crowd_votes_expand_the_aggregated_counts_and_keep_only_label_names(voted):
    dialogues, _ = voted
    votes = gold.crowd_votes([TurnLabel.TRAIN])
    assert votes == {
        last_turn(dialogues[0]).pk: ("Excited", "Excited", "Joyful"),
        last_turn(dialogues[1]).pk: ("Content", "Joyful"),  # a tie: by name
    }
    assert last_turn(dialogues[4]).pk in gold.crowd_votes([TurnLabel.VALIDATION])


def test_the_newest_aggregation_of_a_turn_gives_its_votes(voted):
    dialogues, _ = voted
    later = create_campaign("tie-break")
    _aggregated(later, dialogues[1], {"Content": 3})
    assert gold.crowd_votes([TurnLabel.TRAIN])[last_turn(dialogues[1]).pk] == ("Content", "Content", "Content")


def test_no_majority_items_are_training_turns_without_crowd_gold(voted):
    dialogues, _ = voted
    items = gold.no_majority_items(gold.crowd_votes([TurnLabel.TRAIN, TurnLabel.VALIDATION]))
    assert [(item.key, item.label) for item in items] == [(last_turn(dialogues[1]).pk, None)]
    assert items[0].turns == tuple(t.text for t in dialogues[1].turns.order_by("position"))


def _captured_training(recipe: str, votes, extra):
    learner = rounds.dialogue_classifier_learner(
        1, [rounds_core.Item(99, ("a", "b"), "Neutral")], recipe=recipe, votes=votes, no_majority=extra
    )
    with mock.patch.object(dc, "train", return_value="model") as train:
        assert (
            learner.train([rounds_core.Item(1, ("x", "y"), "Excited"), rounds_core.Item(2, ("z",), "Sad")]) == "model"
        )
    examples, validation, _, config = train.call_args.args
    return examples, validation, config


def test_the_measured_recipe_trains_on_votes_and_the_no_majority_dialogues(ml_settings):
    votes = {1: ("Excited", "Excited", "Joyful"), 7: ("Joyful", "Content")}
    extra = [rounds_core.Item(7, ("p", "q"), None)]
    examples, validation, config = _captured_training("measured", votes, extra)
    assert [(e.turns, e.label, e.votes) for e in examples] == [
        (["x", "y"], "Excited", ("Excited", "Excited", "Joyful")),
        (["z"], "Sad", ()),  # an SBERT or self label has no votes: its label alone
        (["p", "q"], None, ("Joyful", "Content")),
    ]
    assert [e.label for e in validation] == ["Neutral"]
    assert {key: getattr(config, key) for key in dc.MEASURED_RECIPE} == dc.MEASURED_RECIPE
    assert config.epochs == 1


def test_the_paper_recipe_trains_on_the_majority_labels_alone(ml_settings):
    votes = {1: ("Excited", "Excited", "Joyful")}
    examples, _, config = _captured_training("paper", votes, [rounds_core.Item(7, ("p",), None)])
    assert [(e.label, e.votes) for e in examples] == [("Excited", ()), ("Sad", ())]
    assert (config.soft_target_weight, config.ema_decay, config.lr) == (0.0, None, TrainConfig().lr)


def test_an_unknown_recipe_is_refused_by_name(ml_settings):
    with pytest.raises(ValueError, match="recipe='fancy'"):
        rounds.dialogue_classifier_learner(1, [], recipe="fancy")


def test_the_rounds_job_refuses_an_unknown_recipe_naming_the_field(db):
    from jobs.registry import InvalidParameters, get

    with pytest.raises(InvalidParameters, match="recipe"):
        get("self_label_rounds").validate({"recipe": "fancy"})
    assert get("self_label_rounds").validate({})["recipe"] == "measured"
