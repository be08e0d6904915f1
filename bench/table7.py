"""The EDOS paper's Table 7 at CPU scale: a dialogue Transformer pre-trained on raw dialogues, then
fine-tuned on a curated dataset, each model scored on every test set (PPL, Distinct-1/2, SES).

Data, read in place and never copied:
- `edos`: the EDOS crowd dialogues (/work/shared/data/edos/MTurk_groundtruth_labels_9K.csv) that
  have a 2-of-3 majority label, the curated set; every EDOS dialogue (labeled or not) joins `raw`.
- `demo`: the project's seeded demo corpus (annotation.demo_corpus, English dialogues), the second
  fine-tuning set; its dialogues join `raw` too.
Pairs are (turns so far -> next turn). The split is 80/10/10 by dialogue, a hash of the EDOS
DialogID or of the demo dialogue's text (annotation.splits.split_for): the same on every run.
Rows: pretrained (on raw's train split), finetuned_edos, finetuned_demo (each from the pre-trained
weights); test sets: edos and demo (held-out for one fine-tuned row, zero-shot for the other).
Each model trains until its validation loss stops improving (`--patience`), the best epoch kept.

    .venv/bin/python bench/table7.py                    # CPU scale (tiny model, 3 epochs, beam 4)
    .venv/bin/python bench/table7.py --paper --device cuda   # the paper's model: 4 layers, 6 heads, 300 hidden, beam 32
                                                              # (add --max-context-tokens 128 --max-response-tokens 40 --vocab-size 8000)
    .venv/bin/python bench/table7.py --max-epochs 1 --generate-limit 20   # a smoke run

Prints one line per row and test set, `row=finetuned_edos test=edos ppl= d1= d2= ses= pairs=`,
and ends with one line: rows=<n> train_s=<s> score_s=<s> wall_s=<s>
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # shared CPU: spinning OpenMP threads steal cores

import argparse
import csv
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.demo_corpus.generator import generate
from annotation.splits import SPLITS, split_for
from mlworkers.ml.generation import response_model as rm
from mlworkers.ml.generation.decoding import BeamSettings
from mlworkers.ml.loading import load_sentence_transformer

EDOS_CSV = Path(__file__).resolve().parents[2] / "shared" / "data" / "edos" / "MTurk_groundtruth_labels_9K.csv"
MAJORITY_COLUMN = "Agreed emotion (2/3 vote)"
# CPU scale: sized to finish in well under 45 minutes on 2 busy cores (measured under load; see docs)
CPU_SCALE = {"layers": 2, "heads": 2, "hidden": 64, "ffn": 128, "beam": 4, "max_epochs": 3, "generate_limit": 100}
PAPER_SCALE = {
    "layers": 4,
    "heads": 6,
    "hidden": 300,
    "ffn": 1200,
    "beam": 32,
    "max_epochs": 30,
    "generate_limit": None,
}


def split_dialogues(keyed: list[tuple[str, list[str]]]) -> dict[str, list[rm.Pair]]:
    found: dict[str, list[rm.Pair]] = {split: [] for split in SPLITS}
    for key, turns in keyed:
        found[split_for(key)].extend(rm.pairs_of_dialogue(turns))
    return found


def read_edos(path: Path) -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
    """(every dialogue, the dialogues with a majority label), each as (split key, turns)."""
    every, curated = [], []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            turns = [line.strip() for line in row["Dialog"].split("\n") if line.strip()]
            keyed = (f"edos:{row['DialogID']}", turns)
            every.append(keyed)
            if row[MAJORITY_COLUMN].strip() not in ("", "-"):
                curated.append(keyed)
    return every, curated


def read_demo() -> list[tuple[str, list[str]]]:
    dialogues = [d for d in generate().dialogues if d.language == "en"]
    return [("demo:" + "\n".join(d.turns), list(d.turns)) for d in dialogues]


def datasets() -> dict[str, dict[str, list[rm.Pair]]]:
    if not EDOS_CSV.exists():
        sys.exit(f"EDOS data not found at {EDOS_CSV}")
    every, curated = read_edos(EDOS_CSV)
    demo = read_demo()
    return {"raw": split_dialogues(every + demo), "edos": split_dialogues(curated), "demo": split_dialogues(demo)}


def train_row(name, data, tokenizer, config, settings, start_from, device):
    model = rm.ResponseTransformer(config).to(device)
    if start_from is not None:
        model.load_state_dict(start_from.state_dict())
    encoded = {split: rm.encode_pairs(data[split], tokenizer, config) for split in ("train", "validation")}
    started = time.perf_counter()

    def on_epoch(state):
        last = state.history[-1]
        print(f"# {name} epoch {state.epoch}: train {last['train_loss']} validation {last['validation_loss']} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip

    state = rm.fit(model, encoded["train"], encoded["validation"], settings, on_epoch=on_epoch)
    print(f"# {name}: best epoch {state.best_epoch} of {state.epoch}", flush=True)
    return model.eval()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    scale = PAPER_SCALE if args.paper else CPU_SCALE
    pick = {key: getattr(args, key) if getattr(args, key) is not None else scale[key] for key in scale}
    started = time.perf_counter()
    data = datasets()
    for name, found in data.items():
        print(f"# {name}: " + ", ".join(f"{split} {len(found[split])} pairs" for split in SPLITS), flush=True)
    texts = [t for name in ("raw",) for pair in data[name]["train"] for t in (*pair.context[-1:], pair.response)]
    tokenizer = rm.train_tokenizer(texts, args.vocab_size)
    config = rm.ModelConfig(
        vocab_size=tokenizer.get_vocab_size(), layers=pick["layers"], heads=pick["heads"], hidden=pick["hidden"],
        ffn=pick["ffn"], dropout=args.dropout, max_context_tokens=args.max_context_tokens,
        max_response_tokens=args.max_response_tokens,
    )  # fmt: skip
    settings = rm.TrainSettings(pick["max_epochs"], args.patience, args.lr, args.batch_size, args.seed)
    models = {"pretrained": train_row("pretrained", data["raw"], tokenizer, config, settings, None, args.device)}
    for name in ("edos", "demo"):
        models[f"finetuned_{name}"] = train_row(f"finetuned_{name}", data[name], tokenizer, config, settings, models["pretrained"], args.device)  # fmt: skip
    trained = time.perf_counter()
    encoder = load_sentence_transformer("minilm", device=args.device)

    def encode(texts):
        return encoder.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)

    beam = BeamSettings(beam_size=pick["beam"], max_length=args.max_response_tokens, block_ngram=4)
    for row, model in models.items():
        for test in ("edos", "demo"):
            scores = rm.score(model, tokenizer, data[test]["test"], encode, beam, pick["generate_limit"])
            cells = scores.rounded()
            print(f"row={row} test={test} ppl={cells['ppl']} d1={cells['d1']} d2={cells['d2']} ses={cells['ses']} pairs={cells['pairs']}", flush=True)  # fmt: skip
    done = time.perf_counter()
    print(
        f"rows={len(models)} train_s={trained - started:.0f} score_s={done - trained:.0f} wall_s={done - started:.0f}"
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--paper", action="store_true", help="the paper's sizes: 4 layers, 6 heads, 300 hidden, beam 32"
    )
    parser.add_argument("--layers", type=int)
    parser.add_argument("--heads", type=int)
    parser.add_argument("--hidden", type=int)
    parser.add_argument("--ffn", type=int)
    parser.add_argument("--beam", type=int)
    parser.add_argument("--max-epochs", dest="max_epochs", type=int)
    parser.add_argument("--generate-limit", dest="generate_limit", type=int, help="responses generated per test set")
    parser.add_argument("--patience", type=int, default=1)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--vocab-size", type=int, default=2000)
    parser.add_argument("--max-context-tokens", type=int, default=48)
    parser.add_argument("--max-response-tokens", type=int, default=20)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    return parser.parse_args()


if __name__ == "__main__":
    main()
