import pytest

from annotation.taxonomy import EMOTIONS, INTENTS, LABEL_NAMES, TAXONOMY, canonical_label


def test_the_taxonomy_has_32_emotions_8_intents_and_neutral():
    assert len(EMOTIONS) == 32
    assert INTENTS == (
        "Agreeing",
        "Acknowledging",
        "Encouraging",
        "Consoling",
        "Sympathizing",
        "Suggesting",
        "Questioning",
        "Wishing",
    )
    assert LABEL_NAMES[-1] == "Neutral"
    assert len(set(LABEL_NAMES)) == 41


def test_every_label_has_a_description_and_two_distinct_examples():
    for spec in TAXONOMY:
        assert spec.description
        assert len(set(spec.examples)) == 2 and all(spec.examples)


def test_a_typed_label_matches_case_and_spaces_aside():
    assert canonical_label("  joyful ") == "Joyful"
    assert canonical_label("SAD") == "Sad"
    assert canonical_label("Forgetful") is None


@pytest.mark.django_db
def test_the_migration_seeds_all_41_labels_in_taxonomy_order():
    from annotation.models import Label

    assert list(Label.objects.order_by("position").values_list("name", flat=True)) == list(LABEL_NAMES)
    assert Label.objects.get(name="Consoling").kind == "intent"


@pytest.mark.django_db
def test_the_taxonomy_accepts_new_labels_but_not_a_case_variant_of_an_existing_one():
    from django.db import IntegrityError, transaction

    from annotation.models import Label

    Label.objects.create(name="Forgetful", kind=Label.PROPOSED)
    with pytest.raises(IntegrityError), transaction.atomic():
        Label.objects.create(name="joyful", kind=Label.PROPOSED)
