"""The migration that stores one split per dialogue keeps what was held out held out."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotation", "0002_seed_labels")]
AFTER = [("annotation", "0003_dialogue_split_language_encoding")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_gold_splits_move_to_the_dialogue_the_held_out_one_winning():
    old = migrate(BEFORE)
    Dialogue, Turn = old.get_model("annotation", "Dialogue"), old.get_model("annotation", "Turn")
    Label, TurnLabel = old.get_model("annotation", "Label"), old.get_model("annotation", "TurnLabel")
    label = Label.objects.order_by("pk").first()
    made = {}
    for name, splits in {"mixed": ["train", "test"], "valid": ["validation"], "none": []}.items():
        dialogue = Dialogue.objects.create(content_hash=f"migr-{name}", turn_count=len(splits) or 1)
        for position, split in enumerate(splits or [""]):
            turn = Turn.objects.create(dialogue=dialogue, position=position, text=f"Line {position}.")
            if split:
                TurnLabel.objects.create(turn=turn, label=label, source="crowd", split=split)
        made[name] = dialogue.pk
    try:
        new = migrate(AFTER)
        stored = dict(new.get_model("annotation", "Dialogue").objects.values_list("pk", "split"))
        assert stored[made["mixed"]] == "test"  # tested on once: never training data
        assert stored[made["valid"]] == "validation"
        assert stored[made["none"]] in {"train", "validation", "test"}  # the exporter's hash, frozen
    finally:
        # every app back to its latest migration: going back to annotation 0002 also unapplied the
        # migrations of other apps that depend on a later annotation one
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        from annotation.models import Dialogue

        Dialogue.objects.filter(pk__in=made.values()).delete()
