"""One stored split per dialogue; the language of each dialogue; how each file was decoded.

Existing data: a dialogue whose crowd labels already had a split (set by the old `gold_split`
job, which is what models were trained and tested on) keeps it, the most held-out one winning
(test over validation over train), so nothing tested on ever moves into training. Every other
dialogue keeps the split the exporter gave it (a hash of its id, frozen here). Then the per-label
split column goes: the dialogue's is the only one.
"""

import hashlib

from django.db import migrations, models

_HELD_OUT_ORDER = {"test": 0, "validation": 1, "train": 2}
_BATCH = 900


def _exporter_split(dialogue_id: int) -> str:
    """The exporter's old assignment for a dialogue with no stored split, frozen as it was."""
    bucket = int.from_bytes(hashlib.sha256(str(dialogue_id).encode()).digest()[:4], "big") % 100
    return "train" if bucket < 80 else "validation" if bucket < 90 else "test"


def store_dialogue_splits(apps, schema_editor) -> None:
    Dialogue = apps.get_model("annotation", "Dialogue")
    TurnLabel = apps.get_model("annotation", "TurnLabel")
    from_labels: dict[int, str] = {}
    rows = TurnLabel.objects.filter(source="crowd").exclude(split="").values_list("turn__dialogue_id", "split")
    for dialogue_id, split in rows.iterator(chunk_size=5000):
        known = from_labels.get(dialogue_id)
        if known is None or _HELD_OUT_ORDER[split] < _HELD_OUT_ORDER[known]:
            from_labels[dialogue_id] = split
    by_split: dict[str, list[int]] = {"train": [], "validation": [], "test": []}
    for dialogue_id in Dialogue.objects.values_list("pk", flat=True).iterator(chunk_size=5000):
        by_split[from_labels.get(dialogue_id) or _exporter_split(dialogue_id)].append(dialogue_id)
    for split, ids in by_split.items():
        for at in range(0, len(ids), _BATCH):
            Dialogue.objects.filter(pk__in=ids[at : at + _BATCH]).update(split=split)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0002_seed_labels"),
    ]

    operations = [
        migrations.AddField(
            model_name="dialogue",
            name="split",
            field=models.CharField(
                blank=True,
                choices=[("train", "train"), ("validation", "validation"), ("test", "test")],
                db_index=True,
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="dialogue",
            name="language",
            field=models.CharField(blank=True, db_index=True, max_length=8),
        ),
        migrations.AddField(
            model_name="subtitlefile", name="encoding", field=models.CharField(blank=True, max_length=32)
        ),
        migrations.AddField(
            model_name="subtitlefile", name="encoding_reason", field=models.CharField(blank=True, max_length=300)
        ),
        migrations.AddField(
            model_name="subtitlefile", name="language_counts", field=models.JSONField(blank=True, default=dict)
        ),
        migrations.RunPython(store_dialogue_splits, migrations.RunPython.noop),
        migrations.RemoveField(model_name="turnlabel", name="split"),
    ]
