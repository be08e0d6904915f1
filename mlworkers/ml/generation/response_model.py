"""The EDOS paper's dialogue model (Table 7): an encoder-decoder Transformer trained from scratch
on (dialogue so far -> next turn) pairs, with early stopping, and its scores (pure: torch and
`tokenizers`, no Django).

The input is the turns so far joined with the separator token and cut from the LEFT to
`max_context_tokens` (the latest turns matter most); the target is the next turn, cut to
`max_response_tokens` and closed with EOS. The tokenizer is a WordPiece vocabulary trained here on
the training texts (no hub download). Training runs epoch by epoch until the validation loss has
not improved for `patience` epochs; the best epoch's weights are kept. `fit` hands its whole state
to `on_epoch` after every epoch, so a caller can save it and resume at that epoch boundary.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from mlworkers.ml.generation.decoding import BeamSettings, beam_search
from mlworkers.ml.generation.metrics import EncodeFunction, distinct_n, perplexity, sentence_embedding_similarity
from mlworkers.ml.generation.metrics import words as metric_words

PAD, UNK, BOS, EOS, SEP = "[PAD]", "[UNK]", "[BOS]", "[EOS]", "[SEP]"
SPECIAL_TOKENS = [PAD, UNK, BOS, EOS, SEP]
PAD_ID, UNK_ID, BOS_ID, EOS_ID, SEP_ID = range(5)
TOKENIZER_FILE, CONFIG_FILE, WEIGHTS_FILE = "tokenizer.json", "config.json", "model.pt"


@dataclass(frozen=True)
class Pair:
    context: tuple[str, ...]
    response: str


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 8000
    layers: int = 4
    heads: int = 6
    hidden: int = 300
    ffn: int = 1200
    dropout: float = 0.1
    max_context_tokens: int = 128
    max_response_tokens: int = 40

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class TrainSettings:
    max_epochs: int = 30
    patience: int = 2
    lr: float = 5e-4
    batch_size: int = 64
    seed: int = 13


@dataclass
class TrainState:
    """Everything `fit` needs to go on after an epoch boundary."""

    epoch: int = 0
    best_loss: float = math.inf
    best_epoch: int = 0
    bad_epochs: int = 0
    history: list[dict] = field(default_factory=list)
    model: dict | None = None
    best_model: dict | None = None
    optimizer: dict | None = None
    stopped: bool = False


def pairs_of_dialogue(turns: Sequence[str]) -> list[Pair]:
    """One pair per turn after the first: the turns before it, and it."""
    return [Pair(tuple(turns[:index]), turns[index]) for index in range(1, len(turns))]


# --- tokenizer ---------------------------------------------------------------------------------------


def train_tokenizer(texts: Iterator[str] | Sequence[str], vocab_size: int):
    """A lower-cased WordPiece tokenizer trained on `texts`, the special tokens first."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token=UNK))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False)
    tokenizer.train_from_iterator(iter(texts), trainer=trainer)
    return tokenizer


def encode_pair(pair: Pair, tokenizer, config: ModelConfig) -> tuple[list[int], list[int]]:
    """(source ids cut from the left, target ids closed with EOS)."""
    source: list[int] = []
    for index, turn in enumerate(pair.context):
        if index:
            source.append(SEP_ID)
        source.extend(tokenizer.encode(turn).ids)
    target = tokenizer.encode(pair.response).ids[: config.max_response_tokens - 1] + [EOS_ID]
    return source[-config.max_context_tokens :] or [SEP_ID], target


def encode_pairs(pairs: Sequence[Pair], tokenizer, config: ModelConfig) -> list[tuple[list[int], list[int]]]:
    return [encode_pair(pair, tokenizer, config) for pair in pairs]


# --- model -------------------------------------------------------------------------------------------


class ResponseTransformer(nn.Module):
    """Encoder-decoder Transformer with learned positions and the embedding shared with the output."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        positions = max(config.max_context_tokens, config.max_response_tokens + 1)
        self.embedding = nn.Embedding(config.vocab_size, config.hidden, padding_idx=PAD_ID)
        self.position = nn.Embedding(positions, config.hidden)
        self.transformer = nn.Transformer(
            d_model=config.hidden, nhead=config.heads, num_encoder_layers=config.layers,
            num_decoder_layers=config.layers, dim_feedforward=config.ffn, dropout=config.dropout,
            batch_first=True, norm_first=True,
        )  # fmt: skip
        self.norm = nn.LayerNorm(config.hidden)
        # small embeddings (scaled up on input): the shared output layer starts near uniform
        nn.init.normal_(self.embedding.weight, 0.0, config.hidden**-0.5)
        nn.init.normal_(self.position.weight, 0.0, 0.02)
        with torch.no_grad():
            self.embedding.weight[PAD_ID].zero_()

    def _embed(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.embedding(ids) * math.sqrt(self.config.hidden) + self.position(positions)[None]

    def encode(self, source: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        padding = source == PAD_ID
        return self.transformer.encoder(self._embed(source), src_key_padding_mask=padding), padding

    def decode(self, memory: torch.Tensor, source_padding: torch.Tensor, target_in: torch.Tensor) -> torch.Tensor:
        length = target_in.shape[1]
        causal = torch.ones(length, length, dtype=torch.bool, device=target_in.device).triu(1)
        hidden = self.transformer.decoder(
            self._embed(target_in), memory, tgt_mask=causal, tgt_is_causal=True,
            tgt_key_padding_mask=target_in == PAD_ID, memory_key_padding_mask=source_padding,
        )  # fmt: skip
        return self.norm(hidden) @ self.embedding.weight.T

    def forward(self, source: torch.Tensor, target_in: torch.Tensor) -> torch.Tensor:
        memory, padding = self.encode(source)
        return self.decode(memory, padding, target_in)


def _padded(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(len(row) for row in rows)), PAD_ID, dtype=torch.long)
    for index, row in enumerate(rows):
        out[index, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out


def batches(encoded: Sequence[tuple[list[int], list[int]]], size: int, rng: random.Random | None = None):
    """(source, target in, target out) tensors; pairs of like length together, batches shuffled by `rng`."""
    order = sorted(range(len(encoded)), key=lambda index: (len(encoded[index][0]), len(encoded[index][1])))
    groups = [order[start : start + size] for start in range(0, len(order), size)]
    if rng is not None:
        rng.shuffle(groups)
    for group in groups:
        source = _padded([encoded[index][0] for index in group])
        target = _padded([[BOS_ID, *encoded[index][1]] for index in group])
        yield source, target[:, :-1], target[:, 1:]


def device_of(model: nn.Module) -> torch.device:
    return next(model.parameters(), torch.empty(0)).device


def loss_sum(model: nn.Module, source, target_in, target_out) -> tuple[torch.Tensor, int]:
    device = device_of(model)
    source, target_in, target_out = source.to(device), target_in.to(device), target_out.to(device)
    logits = model(source, target_in)
    total = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), target_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )
    return total, int((target_out != PAD_ID).sum())


@torch.no_grad()
def evaluate_nll(model: nn.Module, encoded, batch_size: int = 64) -> tuple[float, int]:
    """(total negative log-likelihood of the target tokens, their count), EOS included."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for source, target_in, target_out in batches(encoded, batch_size):
        nll, tokens = loss_sum(model, source, target_in, target_out)
        total, count = total + float(nll), count + tokens
    model.train(was_training)
    return total, count


def model_perplexity(model: nn.Module, encoded, batch_size: int = 64) -> float:
    return perplexity(*evaluate_nll(model, encoded, batch_size))


# --- training ----------------------------------------------------------------------------------------

EpochHook = Callable[[TrainState], None]


def fit(model, train, validation, settings: TrainSettings, state: TrainState | None = None, on_epoch: EpochHook | None = None) -> TrainState:  # fmt: skip
    """Train until the validation loss stops improving for `settings.patience` epochs (or
    `max_epochs`); the model ends with the best epoch's weights. `state` resumes a saved run."""
    if not train or not validation:
        raise ValueError(f"training needs pairs on both sides: {len(train)} train, {len(validation)} validation")
    state = state or TrainState()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr)
    if state.model is not None:
        model.load_state_dict(state.model)
        optimizer.load_state_dict(state.optimizer)
    while not state.stopped and state.epoch < settings.max_epochs:
        rng = random.Random(settings.seed * 1000 + state.epoch)
        torch.manual_seed(settings.seed * 1000 + state.epoch)
        train_loss = _train_epoch(model, optimizer, train, settings.batch_size, rng)
        validation_loss = perplexity(*evaluate_nll(model, validation, settings.batch_size))
        _record_epoch(state, model, optimizer, train_loss, math.log(validation_loss), settings.patience)
        if on_epoch is not None:
            on_epoch(state)
    model.load_state_dict(state.best_model)
    return state


def _train_epoch(model, optimizer, train, batch_size: int, rng: random.Random) -> float:
    model.train()
    total, count = 0.0, 0
    for source, target_in, target_out in batches(train, batch_size, rng):
        loss, tokens = loss_sum(model, source, target_in, target_out)
        optimizer.zero_grad()
        (loss / max(tokens, 1)).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total, count = total + float(loss.detach()), count + tokens
    return total / max(count, 1)


def _record_epoch(
    state: TrainState, model, optimizer, train_loss: float, validation_loss: float, patience: int
) -> None:
    state.epoch += 1
    state.history.append(
        {"epoch": state.epoch, "train_loss": round(train_loss, 4), "validation_loss": round(validation_loss, 4)}
    )
    if validation_loss < state.best_loss:
        state.best_loss, state.best_epoch, state.bad_epochs = validation_loss, state.epoch, 0
        state.best_model = copy.deepcopy(model.state_dict())
    else:
        state.bad_epochs += 1
        state.stopped = state.bad_epochs >= patience
    state.model, state.optimizer = model.state_dict(), optimizer.state_dict()


# --- generation and scores ---------------------------------------------------------------------------


@torch.no_grad()
def generate(model: ResponseTransformer, source_ids: Sequence[int], settings: BeamSettings) -> list[int]:
    model.eval()
    device = device_of(model)
    memory, padding = model.encode(torch.tensor([list(source_ids)], dtype=torch.long, device=device))

    def step(prefixes: torch.Tensor) -> torch.Tensor:
        beams = prefixes.shape[0]
        logits = model.decode(memory.expand(beams, -1, -1), padding.expand(beams, -1), prefixes.to(device))
        return torch.log_softmax(logits[:, -1].float(), dim=-1).cpu()

    return beam_search(step, BOS_ID, EOS_ID, settings)


@dataclass(frozen=True)
class Scores:
    ppl: float
    d1: float
    d2: float
    ses: float
    pairs: int

    def rounded(self) -> dict:
        return {"ppl": round(self.ppl, 2), "d1": round(self.d1, 4), "d2": round(self.d2, 4), "ses": round(self.ses, 4), "pairs": self.pairs}  # fmt: skip


def score(model, tokenizer, pairs: Sequence[Pair], encode: EncodeFunction, beam: BeamSettings, generate_limit: int | None = None, batch_size: int = 64) -> Scores:  # fmt: skip
    """Perplexity on every pair's target; Distinct-1/2 and SES over the responses generated for the
    first `generate_limit` pairs (all when None: beam search is the slow part on a CPU)."""
    config = model.config
    encoded = encode_pairs(pairs, tokenizer, config)
    ppl = model_perplexity(model, encoded, batch_size)
    chosen = list(range(len(pairs)))[: generate_limit if generate_limit is not None else len(pairs)]
    generated = [tokenizer.decode(generate(model, encoded[index][0], beam)) for index in chosen]
    tokens = [metric_words(text) for text in generated]
    ses = sentence_embedding_similarity(generated, [pairs[index].response for index in chosen], encode)
    return Scores(ppl, distinct_n(tokens, 1), distinct_n(tokens, 2), ses, len(pairs))


# --- files -------------------------------------------------------------------------------------------


def save_model(model: ResponseTransformer, tokenizer, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(directory / TOKENIZER_FILE))
    (directory / CONFIG_FILE).write_text(json.dumps(model.config.to_dict(), indent=1))
    torch.save(model.state_dict(), directory / WEIGHTS_FILE)


def load_model(directory: Path, device: str | torch.device = "cpu") -> tuple[ResponseTransformer, object]:
    from tokenizers import Tokenizer

    model = ResponseTransformer(ModelConfig(**json.loads((directory / CONFIG_FILE).read_text())))
    model.load_state_dict(torch.load(directory / WEIGHTS_FILE, weights_only=True, map_location="cpu"))
    return model.to(device).eval(), Tokenizer.from_file(str(directory / TOKENIZER_FILE))
