"""A tiny randomly initialised BERT (2 layers, 32 wide) with the packaged MiniLM tokenizer, so
classifier tests train and predict in seconds. Helpers, not fixtures: other test files share the
folder's conftest, so the fixtures live in the test files that use them."""

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

import torch

from mlworkers.ml import loading
from mlworkers.ml.classifier.model import DialogueExample, TrainConfig


def write_tiny_encoder(directory: Path) -> Path:
    from transformers import BertConfig, BertModel

    tokenizer = loading.load_tokenizer("minilm")
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@functools.cache
def tiny_encoder_path() -> str:
    """One tiny encoder folder per test process, shared by the test files, removed at exit."""
    directory = Path(tempfile.mkdtemp(prefix="tiny-encoder-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return str(write_tiny_encoder(directory))


# Hand-written dialogues; three labels whose words do not overlap, so a tiny model can learn them.
TOY_DIALOGUES = [
    (["Are you coming?", "We won the match, this is wonderful!"], "Joyful"),
    (["Look at the score.", "Wonderful, we won again, what a day!"], "Joyful"),
    (["Happy news!", "This is the best, wonderful day ever!"], "Joyful"),
    (["So?", "I won! Wonderful!"], "Joyful"),
    (["Where is the car?", "Something is in the cellar, I am terrified."], "Terrified"),
    (["Did you hear that?", "The cellar door moved, I'm so scared."], "Terrified"),
    (["Stay here.", "Please, I'm terrified of the dark cellar."], "Terrified"),
    (["Listen.", "Scared, so scared, terrified!"], "Terrified"),
    (["Anything else?", "The meeting is on the third floor at noon."], "Neutral"),
    (["Which room?", "Third floor, the meeting room, at noon."], "Neutral"),
    (["When?", "Noon, on the third floor."], "Neutral"),
    (["And the folder?", "The blue folder is on the third floor."], "Neutral"),
]
TOY_LABELS = ["Joyful", "Terrified", "Neutral"]


def one_torch_thread():
    """Generator for an autouse fixture: the tiny models run fastest on one thread, and on a busy
    machine two spinning OpenMP threads are many times slower than one."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def toy_examples() -> list[DialogueExample]:
    return [DialogueExample(list(turns), label) for turns, label in TOY_DIALOGUES]


def toy_config(**overrides) -> TrainConfig:
    """The tiny encoder on the CPU with a recipe that learns the toy dialogues in seconds."""
    values = {"base_model": tiny_encoder_path(), "device": "cpu", "lr": 3e-3, "epochs": 6, "batch_size": 4, "seed": 3}
    return TrainConfig(**{**values, **overrides})
