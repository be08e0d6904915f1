"""BotsTalk's files: pools, contexts and NLI pairs; every bad line is named with its file and line."""

import json

import pytest

from mlworkers.botstalk.runs import EXAMPLE_CONTEXTS, EXAMPLE_NLI_PAIRS, EXAMPLE_POOL
from mlworkers.ml.botstalk.files import (
    BotsTalkFileError,
    DialogueContexts,
    PoolUtterance,
    read_contexts,
    read_nli_pairs,
    read_pool,
    split_paths,
)


def write_lines(path, *lines):
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_it_reads_a_pool_from_files_and_folders_keeping_a_repeat_once(tmp_path):
    write_lines(
        tmp_path / "a.jsonl", {"text": "I  have two dogs.", "skill": "persona"}, "", {"text": "Hi.", "skill": "x"}
    )
    write_lines(tmp_path / "b.jsonl", {"text": "I have two dogs.", "skill": "persona", "id": "7"})
    assert read_pool([tmp_path]) == [PoolUtterance("I have two dogs.", "persona"), PoolUtterance("Hi.", "x")]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["text", "skill"]', "expected an object"),
        ({"text": "Hello."}, "missing 'skill'"),
        ({"text": " ", "skill": "persona"}, "'text' must be a non-empty string"),
        ({"text": "Hello.", "skill": 3}, "'skill' must be a non-empty string"),
        ({"text": "Hello.", "skill": "s" * 33}, "longer than 32"),
        ({"text": "Hello.", "skill": "persona", "label": "x"}, "unknown field 'label'"),
    ],
)
def test_a_bad_pool_line_is_named(tmp_path, line, message):
    path = write_lines(tmp_path / "pool.jsonl", {"text": "Fine.", "skill": "persona"}, "", line)
    with pytest.raises(BotsTalkFileError) as error:
        read_pool([path])
    assert str(error.value).startswith(f"{path}:3: ")
    assert message in str(error.value)


def test_missing_and_empty_files_are_refused(tmp_path):
    with pytest.raises(BotsTalkFileError, match="no such file"):
        read_pool([tmp_path / "absent.jsonl"])
    with pytest.raises(BotsTalkFileError, match="no utterances"):
        read_pool([write_lines(tmp_path / "empty.jsonl", "")])
    (tmp_path / "sub").mkdir()
    with pytest.raises(BotsTalkFileError, match="no .jsonl files"):
        read_pool([tmp_path / "sub"])


def test_it_reads_contexts_with_texts_or_lists(tmp_path):
    path = write_lines(
        tmp_path / "c.jsonl",
        {
            "id": "a",
            "contexts": {"persona": ["I sing.", "I  run."], "knowledge": "Singing is old."},
            "start_skill": "p",
        },
    )
    [spec] = read_contexts(path, {"p"})
    assert spec == DialogueContexts("a", {"persona": ["I sing.", "I run."], "knowledge": ["Singing is old."]}, "p", 1)
    assert spec.premises() == [("persona", "I sing."), ("persona", "I run."), ("knowledge", "Singing is old.")]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": "a", "contexts": {"persona": "x"}}, "id 'a' is already used on line 1"),
        ({"id": "b", "contexts": []}, "'contexts' must be a non-empty object"),
        ({"id": "b", "contexts": {}}, "'contexts' must be a non-empty object"),
        ({"id": "b", "contexts": {"persona": [""]}}, "context 'persona' must be a non-empty text"),
        ({"id": "b", "contexts": {"persona": 3}}, "context 'persona' must be a non-empty text"),
        ({"id": "b", "contexts": {"persona": "x"}, "start_skill": "chef"}, "start_skill 'chef' has no pool"),
        ({"contexts": {"persona": "x"}}, "missing 'id'"),
        ({"id": "b", "context": {"persona": "x"}}, "unknown field 'context'"),
    ],
)
def test_a_bad_contexts_line_is_named(tmp_path, line, message):
    path = write_lines(tmp_path / "c.jsonl", {"id": "a", "contexts": {"persona": "I sing."}}, line)
    with pytest.raises(BotsTalkFileError) as error:
        read_contexts(path, {"persona", "empathy"})
    assert str(error.value).startswith(f"{path}:2: ")
    assert message in str(error.value)


def test_nli_pairs_need_a_contradiction_label_and_name_bad_lines(tmp_path):
    good = {"premise": "I sing.", "hypothesis": "I never sing.", "label": "Contradiction"}
    other = {"premise": "I sing.", "hypothesis": "I sing songs.", "label": "entailment"}
    assert read_nli_pairs(write_lines(tmp_path / "p.jsonl", good, other))[0].label == "contradiction"
    with pytest.raises(BotsTalkFileError, match="no pair is labeled 'contradiction'"):
        read_nli_pairs(write_lines(tmp_path / "q.jsonl", other, other))
    path = write_lines(tmp_path / "r.jsonl", good, {"premise": "I sing.", "label": "neutral"})
    with pytest.raises(BotsTalkFileError, match=rf"^{path}:2: missing 'hypothesis'"):
        read_nli_pairs(path)


def test_the_example_files_read_cleanly():
    pool = read_pool([EXAMPLE_POOL])
    skills = {u.skill for u in pool}
    assert skills == {"persona", "knowledge", "empathy"} and len(pool) >= 60
    specs = read_contexts(EXAMPLE_CONTEXTS, skills)
    assert len(specs) >= 5 and all(set(s.contexts) == skills for s in specs)
    labels = {p.label for p in read_nli_pairs(EXAMPLE_NLI_PAIRS)}
    assert labels == {"contradiction", "neutral", "entailment"}


def test_split_paths_takes_commas_and_spaces():
    assert split_paths("a.jsonl, b.jsonl c.jsonl") == ["a.jsonl", "b.jsonl", "c.jsonl"]
