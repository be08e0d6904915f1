"""BotsTalk's jobs, Django side: train the skill classifier and the NLI, generate dialogues into the
corpus, label any corpus's turns with skills. The work is in `mlworkers.ml.botstalk.agents` (the loop),
`ml.nli` and `ml.sentence_classifier` (the skill classifier is the weak labeler's encoder + head
over the skills a file names).

    skill_train   ModelVersion(kind skill) from utterances labeled with a skill (a pool file)
    nli_train     ModelVersion(kind nli) from premise/hypothesis/label pairs
    botstalk      Dialogue(source botstalk) + Turn + SkillContext + TurnSkill(botstalk) per dialogue;
                  the agents speak from the corpus's interaction-response pairs (`corpus_pairs`,
                  or an `extract_pairs` file), from the hand-written pool only when there is none
    skill_label   TurnSkill(classifier) for every turn a skill classifier has not labeled yet
"""

from __future__ import annotations

from dataclasses import asdict
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef

from annotation.ingest.language import UNKNOWN as UNKNOWN_LANGUAGE
from annotation.ingest.language import texts_language
from annotation.ingest.pairs import DEFAULT_MAX_GAP, turn_pairs
from annotation.ingest.records import dialogue_hash
from annotation.models import Dialogue, ModelVersion, SkillContext, Turn, TurnSkill
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, report_progress
from mlworkers.ml.botstalk import files
from mlworkers.registry import artifact_path, register_model_version

DATA = Path(__file__).resolve().parents[1] / "data" / "botstalk"
EXAMPLE_POOL = DATA / "pool.jsonl"
EXAMPLE_CONTEXTS = DATA / "contexts.jsonl"
EXAMPLE_NLI_PAIRS = DATA / "nli_pairs.jsonl"
SUBTITLES, ALL = "subtitles", "all"
CORPUS, POOL = "corpus", "pool"
MAX_PAIRS = 50_000


def _newest(kind: str, pk: int | None) -> ModelVersion:
    versions = ModelVersion.objects.filter(kind=kind)
    version = versions.filter(pk=pk).first() if pk else versions.order_by("-created_at", "-pk").first()
    if version is None:
        command = {"skill": "train_skill_classifier", "nli": "train_nli"}[kind]
        missing = f"no {kind} model version {pk}" if pk else f"no {kind} model version yet"
        raise JobCannotRun(f"{missing}: train one with `python manage.py {command}` or the {kind}_train job")
    return version


def _file_error(error: files.BotsTalkFileError) -> JobCannotRun:
    return JobCannotRun(str(error))


# --- training ----------------------------------------------------------------------------------------


def skill_train(
    job: JobRun, data_path: str | None = None, model_name: str | None = None, epochs: int | None = None, name: str = ""
) -> dict[str, Any]:
    """A skill classifier over every skill the files name (frozen encoder, a linear head)."""
    from mlworkers.ml.classifier.sentence_classifier import LabeledSentence, WeakLabelerConfig, train_weak_labeler

    paths = files.split_paths(data_path or str(EXAMPLE_POOL))
    try:
        utterances = files.read_pool(paths)
    except files.BotsTalkFileError as error:
        raise _file_error(error) from None
    skills = sorted({u.skill for u in utterances})
    if len(skills) < 2:
        raise JobCannotRun(f"{', '.join(paths)}: a skill classifier needs two skills or more, found {skills}")
    config = WeakLabelerConfig(model_name=model_name or settings.ENCODER_MODEL, device=settings.ML_DEVICE)
    if epochs:
        config.epochs = epochs
    report_progress(job, 0, 1, f"training on {len(utterances)} utterances, skills {', '.join(skills)}")
    sentences = [LabeledSentence(u.text, u.skill) for u in utterances]
    labeler = train_weak_labeler(sentences, skills, config)
    version = register_model_version(
        ModelVersion.SKILL,
        name or f"skill classifier ({', '.join(skills)})",
        labeler,
        base_model=config.model_name,
        label_names=skills,
        training_data={"files": paths, "utterances": len(utterances)},
        hyperparameters=asdict(config),
    )
    return {"model_version": version.pk, "skills": skills, "utterances": len(utterances)}


def nli_train(
    job: JobRun, data_path: str | None = None, model_name: str | None = None, epochs: int | None = None, name: str = ""
) -> dict[str, Any]:
    """The moderator's small NLI (a head over frozen sentence embeddings) from labeled pairs."""
    from mlworkers.ml.botstalk.nli import PairClassifierConfig, train_pair_classifier

    path = data_path or str(EXAMPLE_NLI_PAIRS)
    try:
        pairs = files.read_nli_pairs(path)
    except files.BotsTalkFileError as error:
        raise _file_error(error) from None
    config = PairClassifierConfig(model_name=model_name or settings.ENCODER_MODEL, device="cpu")
    if epochs:
        config.epochs = epochs
    report_progress(job, 0, 1, f"training on {len(pairs)} pairs")
    model = train_pair_classifier(pairs, config)
    accuracy = _training_accuracy(model, pairs)
    version = register_model_version(
        ModelVersion.NLI,
        name or f"NLI pairs ({Path(path).name})",
        model,
        base_model=config.model_name,
        label_names=model.label_names,
        training_data={"file": path, "pairs": len(pairs)},
        hyperparameters=asdict(config),
        metrics={"training_accuracy": accuracy},
    )
    return {"model_version": version.pk, "pairs": len(pairs), "training_accuracy": accuracy}


def _training_accuracy(model, pairs) -> float:
    probabilities = model.predict_proba([p.premise for p in pairs], [p.hypothesis for p in pairs])
    hits = sum(model.label_names[row.argmax()] == p.label for row, p in zip(probabilities, pairs, strict=True))
    return round(hits / len(pairs), 4)


# --- loading the models ---------------------------------------------------------------------------------


class LabelerSkills:
    """A skill ModelVersion as the loop's SkillClassifier: one distribution over skills per text."""

    def __init__(self, labeler):
        self.labeler, self.skill_names = labeler, list(labeler.label_names)

    def distributions(self, texts):
        return self.labeler.predict_proba(list(texts))


def load_skill_classifier(version: ModelVersion) -> LabelerSkills:
    """The one point where a skill ModelVersion's files become a model (tests may patch it)."""
    from mlworkers.ml.classifier.sentence_classifier import load_weak_labeler

    return LabelerSkills(load_weak_labeler(artifact_path(version)))


def load_moderator_nli(nli_model: str | None, nli_model_version_id: int | None):
    """`nli_model` (a hub name such as roberta-large-mnli, or a local path), else the setting
    BOTSTALK_NLI_MODEL, else an nli ModelVersion (the given id or the newest). Returns (model, description)."""
    from mlworkers.ml.botstalk.nli import load_nli
    from mlworkers.ml.loading import pick_device

    device = str(pick_device(settings.ML_DEVICE))
    name = nli_model or ("" if nli_model_version_id else getattr(settings, "BOTSTALK_NLI_MODEL", ""))
    if name:
        try:
            return load_nli(name, device=device), name
        except (OSError, ValueError) as error:
            raise JobCannotRun(f"NLI model {name!r}: {error}") from None
    version = _newest(ModelVersion.NLI, nli_model_version_id)
    return load_nli(str(artifact_path(version)), device=device), f"model version {version.pk} ({version.name})"


class ClassifierLabels:
    """A dialogue-classifier ModelVersion as the emotion agent's Labeler: label probabilities for
    the last turn of each dialogue."""

    def __init__(self, classifier):
        self.classifier, self.label_names = classifier, list(classifier.label_names)

    def probabilities(self, dialogues):
        from mlworkers.ml.classifier.inference import predict_examples
        from mlworkers.ml.classifier.model import DialogueExample

        return predict_examples(self.classifier, [DialogueExample(list(turns)) for turns in dialogues])


def load_emotion_labeler(dialogue_model_version_id: int | None) -> tuple[ClassifierLabels | None, str]:
    """The dialogue classifier the emotion agent ranks by (the given id, else the newest), or
    (None, "") when none is trained yet: the emotion agent then ranks like the others."""
    from mlworkers.registry import load_dialogue_classifier

    versions = ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE)
    if dialogue_model_version_id:
        version = versions.filter(pk=dialogue_model_version_id).first()
        if version is None:
            raise JobCannotRun(f"no dialogue model version {dialogue_model_version_id}")
    else:
        version = versions.order_by("-created_at", "-pk").first()
        if version is None:
            return None, ""
    return ClassifierLabels(load_dialogue_classifier(version)), f"model version {version.pk} ({version.name})"


# --- the corpus the agents speak from ---------------------------------------------------------------------


def corpus_pairs(
    max_gap: float = DEFAULT_MAX_GAP, limit: int = MAX_PAIRS, language: str = ""
) -> list[files.ResponsePair]:
    """The SubTle pairs of the subtitle dialogues' consecutive turns (`annotation.ingest.pairs.turn_pairs`),
    dialogues in id order, at most `limit`; with a `language`, only its dialogues (and those whose
    language is not known)."""
    turns = Turn.objects.filter(dialogue__source=Dialogue.SUBTITLES)
    if language and language != UNKNOWN_LANGUAGE:
        turns = turns.filter(dialogue__language__in=[language, "", UNKNOWN_LANGUAGE])
    rows = turns.order_by("dialogue_id", "position").values_list("dialogue_id", "text", "start", "end")
    pairs: list[files.ResponsePair] = []
    for _dialogue, turns in groupby(rows.iterator(chunk_size=5000), key=itemgetter(0)):
        for interaction, response in turn_pairs((text, start, end) for _d, text, start, end in turns):
            pairs.append(files.ResponsePair(interaction, response))
            if len(pairs) >= limit:
                return pairs
    return pairs


def candidate_pairs(
    candidates: str, pairs_file: str | None, max_pairs: int, language: str = ""
) -> list[files.ResponsePair]:
    """What the agents speak from: nothing for "pool", else the pairs file when given, else the
    corpus's pairs in `language` (that of the skill contexts)."""
    if candidates == POOL:
        return []
    if pairs_file:
        try:
            return files.read_response_pairs(pairs_file)[:max_pairs]
        except files.BotsTalkFileError as error:
            raise _file_error(error) from None
    return corpus_pairs(limit=max_pairs, language=language)


# --- generation --------------------------------------------------------------------------------------------


def botstalk(
    job: JobRun,
    pools: str | None = None,
    contexts: str | None = None,
    skill_model_version_id: int | None = None,
    nli_model: str | None = None,
    nli_model_version_id: int | None = None,
    encoder: str | None = None,
    alpha: float = 6.0,
    turns: int = 6,
    top_k: int = 5,
    nli_threshold: float = 0.5,
    seed: int = 13,
    candidates: str = CORPUS,
    pairs_file: str | None = None,
    max_pairs: int = MAX_PAIRS,
    dialogue_model_version_id: int | None = None,
) -> dict[str, Any]:
    """Generate one dialogue per line of the contexts file into the corpus (source botstalk). The
    agents, one per skill of the pool, speak from the corpus's pairs (or the pool when none)."""
    from mlworkers.ml import loading
    from mlworkers.ml.botstalk.agents import BotsTalk, BotsTalkConfig

    pool_paths = files.split_paths(pools or str(EXAMPLE_POOL))
    try:
        pool = files.read_pool(pool_paths)
        specs = files.read_contexts(contexts or EXAMPLE_CONTEXTS, {u.skill for u in pool})
    except files.BotsTalkFileError as error:
        raise _file_error(error) from None
    language = texts_language([text for spec in specs for _kind, text in spec.premises()])
    pairs = candidate_pairs(candidates, pairs_file, max_pairs, language)
    skill_version = _newest(ModelVersion.SKILL, skill_model_version_id)
    skills = load_skill_classifier(skill_version)
    nli, nli_name = load_moderator_nli(nli_model, nli_model_version_id)
    labeler, labeler_name = load_emotion_labeler(dialogue_model_version_id) if pairs else (None, "")
    report_progress(job, 0, len(specs), f"embedding {len(pairs) or len(pool)} {'pairs' if pairs else 'pool lines'}")
    try:
        bi_encoder = loading.load_sentence_transformer(encoder or settings.ENCODER_MODEL)
    except OSError as error:
        raise JobCannotRun(f"bi-encoder {encoder or settings.ENCODER_MODEL!r}: {error}") from None
    agents, speaking_from = _agents(pairs, pool, bi_encoder, labeler)
    config = BotsTalkConfig(alpha=alpha, turns=turns, top_k=top_k, nli_threshold=nli_threshold, seed=seed)
    talk = BotsTalk(agents, bi_encoder, nli, skills, config)
    stored, duplicates, too_short = _generate_all(job, talk, specs, skill_version, skills.skill_names)
    return {
        "dialogues_stored": len(stored),
        "dialogue_ids": stored[:1000],
        "duplicates_dropped": duplicates,
        "too_short": too_short,
        "skills": sorted(agents),
        "candidates": speaking_from,
        "pairs": len(pairs),
        "pairs_language": language if pairs and not pairs_file else "",
        "emotion_labeler": labeler_name,
        "skill_model_version": skill_version.pk,
        "nli": nli_name,
        "ranker": _ranker_name(agents),
        "parameters": asdict(config),
        "diagnostics": talk.diagnostics.summary(),
    }


def _agents(pairs, pool, bi_encoder, labeler, reranker=None):
    """Corpus agents over the pairs, else the pool's. `reranker` is the hook for a response
    model's likelihood (none yet)."""
    from mlworkers.ml.botstalk.corpus import choose_agents

    return choose_agents(pairs, pool, bi_encoder, labeler=labeler, reranker=reranker)


def _ranker_name(agents) -> str:
    agent = next(iter(agents.values()))
    return (agent.corpus.index if hasattr(agent, "corpus") else agent.index).name


def _generate_all(job, talk, specs, skill_version, skill_names) -> tuple[list[int], int, int]:
    stored, duplicates, too_short = [], 0, 0
    for index, spec in enumerate(specs):
        generated = talk.generate(spec, index)
        if len(generated) < 2:
            too_short += 1
        else:
            dialogue = store_dialogue(job, index, spec, generated, skill_version, skill_names)
            if dialogue is None:
                duplicates += 1
            else:
                stored.append(dialogue.pk)
        report_progress(job, index + 1, len(specs), f"{len(stored)} dialogues stored")
    return stored, duplicates, too_short


def external_id(job: JobRun, index: int, spec: files.DialogueContexts) -> str:
    return f"bt{job.pk}-{index}:{spec.id}"[:64]


def store_dialogue(job, index, spec, generated, skill_version, skill_names) -> Dialogue | None:
    """One transaction per dialogue: the dialogue, its turns, contexts and skills, or nothing.
    A retried job finds its dialogue by external id; the same text stored before is a duplicate
    (None), as in ingestion."""
    texts = [turn.text for turn in generated]
    with transaction.atomic():
        done = Dialogue.objects.filter(source=Dialogue.BOTSTALK, external_id=external_id(job, index, spec)).first()
        if done is not None:
            return done
        content_hash = dialogue_hash(texts)
        if Dialogue.objects.filter(content_hash=content_hash).exists():
            return None
        dialogue = Dialogue.objects.create(
            source=Dialogue.BOTSTALK,
            external_id=external_id(job, index, spec),
            position=index,
            content_hash=content_hash,
            turn_count=len(texts),
            language=texts_language(texts),
        )
        rows = Turn.objects.bulk_create(
            Turn(dialogue=dialogue, position=i, text=text, token_count=len(text.split()))
            for i, text in enumerate(texts)
        )
        SkillContext.objects.bulk_create(
            SkillContext(dialogue=dialogue, kind=kind, position=i, text=text)
            for kind, pieces in spec.contexts.items()
            for i, text in enumerate(pieces)
        )
        TurnSkill.objects.bulk_create(
            _generated_skill(row, turn, skill_version, skill_names, job)
            for row, turn in zip(rows, generated, strict=True)
        )
    return dialogue


def _generated_skill(row, turn, skill_version, skill_names, job) -> TurnSkill:
    return TurnSkill(
        turn=row,
        source=TurnSkill.BOTSTALK,
        model_version=skill_version,
        skill=turn.skill,
        distribution=_distribution(skill_names, turn.distribution),
        passed_mic=turn.passed_mic,
        provenance={
            "job": job.pk,
            "kl_from_previous": None if turn.kl_from_previous is None else round(turn.kl_from_previous, 6),
            "candidates_refused": turn.refused,
        },
    )


def _distribution(skill_names, probabilities) -> dict[str, float]:
    """{skill: p} renormalised after float32, so the stored values sum to 1."""
    values = [max(0.0, float(p)) for p in probabilities]
    total = sum(values) or 1.0
    return {name: value / total for name, value in zip(skill_names, values, strict=True)}


# --- skill labels for any corpus ---------------------------------------------------------------------------


def skill_label(
    job: JobRun,
    skill_model_version_id: int | None = None,
    source: str = ALL,
    dialogue_ids: list[int] | None = None,
    chunk_size: int = 2000,
    batch_size: int = 128,
) -> dict[str, Any]:
    """TurnSkill(classifier) for every chosen turn this skill classifier has not labeled, in chunks
    each committed on its own: a killed job started again labels only what is missing."""
    version = _newest(ModelVersion.SKILL, skill_model_version_id)
    turns = Turn.objects.all()
    if source != ALL:
        turns = turns.filter(dialogue__source=Dialogue.SUBTITLES if source == SUBTITLES else source)
    if dialogue_ids:
        turns = turns.filter(dialogue_id__in=dialogue_ids)
    total = turns.count()
    labeled = TurnSkill.objects.filter(turn=OuterRef("pk"), source=TurnSkill.CLASSIFIER, model_version=version)
    pending = turns.exclude(Exists(labeled)).order_by("pk")
    done = total - pending.count()
    report_progress(job, done, total, f"{done} of {total} turns already labeled")
    skills = load_skill_classifier(version)
    written = 0
    while True:
        chunk = list(pending.values_list("pk", "text")[:chunk_size])
        if not chunk:
            break
        probabilities = skills.labeler.predict_proba([text for _pk, text in chunk], batch_size=batch_size)
        rows = [
            _classified(pk, version, skills.skill_names, row)
            for (pk, _text), row in zip(chunk, probabilities, strict=True)
        ]
        with transaction.atomic():
            TurnSkill.objects.bulk_create(rows, ignore_conflicts=True)
        written += len(rows)
        report_progress(job, done + written, total, f"{done + written} of {total} turns labeled")
    return {"model_version": version.pk, "turns": total, "labeled_now": written, "skills": skills.skill_names}


def _classified(turn_id, version, skill_names, row) -> TurnSkill:
    distribution = _distribution(skill_names, row)
    return TurnSkill(
        turn_id=turn_id,
        source=TurnSkill.CLASSIFIER,
        model_version=version,
        skill=max(distribution, key=distribution.get),
        distribution=distribution,
    )
