"""`make gpu-smoke`: every paper preset trains a few steps, predicts, and two processes train under torchrun.

Before a lent GPU's hours go to bench/table7.toml, this checks in minutes that each paper preset
(``models/presets/`` less the ``cpu-*`` ones) runs end to end on that machine: ``envbench train`` for
``--steps`` steps on the first ``--n-docs`` Re-DocRED dev documents (EVRT presets with those documents'
renamed twins, made here by kb-from-corpus, ingest-dump and generate --twins), ``envbench predict`` with
the run it wrote, and one preset under ``torchrun --nproc_per_node 2`` (DDP: two GPUs with NCCL where the
machine has them, else two CPU processes with gloo). It prints, per preset, the seconds and the document
passes a second, the figures bench/table7.toml's cost estimate needs.

    python bench/gpu_smoke.py                      # CPU, tiny random BERT and RoBERTa encoders built here
    python bench/gpu_smoke.py --bert DIR --roberta DIR --device cuda     # a lent GPU, the real encoders

Without ``--bert``/``--roberta`` the presets run on tiny random encoders (hidden 32, 2 layers; a WordPiece
vocabulary of the documents' words with BERT's [unusedK] markers, a byte-level BPE without merges), with
their widths cut to match (``TINY``): every code path of the preset (model, loss, markers, EVRT terms,
optimizer groups, long-document windows, the cut at 1,024 wordpieces) at a size a CPU runs in minutes.
Exit status 1 when any step fails; OUT/smoke.json holds every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHARED = Path(os.environ.get("ENVBENCH_SHARED", REPO.parent / "shared" / "data"))
# widths a tiny encoder takes (hidden 32): the extractors, the bilinear's groups, DocuNet's U-Net, KD-DocRE's heads
TINY = ["emb_size=32", "block_size=8", "unet_width=8", "unet_out=8", "axial_heads=2", "axial_width=0",
        "window=128", "max_length=512"]  # and shorter windows: two of them, and the cut, still happen, at CPU cost
TORCHRUN_PRESET = "redocred-bert-base-vanilla"


def paper_presets() -> list[str]:
    from models.config import preset_names

    return [p for p in preset_names() if not p.startswith("cpu-")]


def envbench(args: list[str]) -> None:
    """One envbench command in this process (torch and transformers load once for all of them)."""
    from envbench.cli import cli

    cli.main(args=args, prog_name="envbench", standalone_mode=False)


def tiny_bert(folder: Path, docs: list[dict[str, Any]]) -> Path:
    """A random BERT (hidden 32, 2 layers) with a WordPiece vocabulary of the documents' words, [unused0..99] and *."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    words = sorted({t.lower() for d in docs for s in d["sents"] for t in s} - {"*"})
    vocab = ["[PAD]", *[f"[unused{i}]" for i in range(100)], "[UNK]", "[CLS]", "[SEP]", "[MASK]", "*", *words]
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512)
    BertModel(config).save_pretrained(folder)
    BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}).save_pretrained(folder)
    return folder


def tiny_roberta(folder: Path) -> Path:
    """A random RoBERTa (hidden 32, 2 layers) with a byte-level BPE of no merges: every byte its own token."""
    import torch
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizer

    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", *sorted(ByteLevel.alphabet()), "<mask>"])}
    torch.manual_seed(0)
    config = RobertaConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=64, max_position_embeddings=514)
    RobertaModel(config).save_pretrained(folder)
    RobertaTokenizer(vocab=vocab, merges=[]).save_pretrained(folder)
    return folder


def make_twins(docs: Path, out: Path) -> Path:
    """The documents' renamed twins (train name pool) from a knowledge base of the documents themselves."""
    env = out / "env"
    envbench(["kb-from-corpus", str(docs), "--out", str(env / "kb.json.gz"), "--links", str(env / "links.json")])
    envbench(["ingest-dump", str(env / "kb.json.gz"), "--out", str(env / "index"), "--force", "--no-progress"])
    envbench(["generate", str(docs), "--index", str(env / "index"), "--links", str(env / "links.json"), "--pool", "train",
              "--seeds", "1", "--twins", "--no-progress", "--out", str(env / "twins"), "--force",
              # the smoke scores (predicts on) these same documents, so their names are the ones to keep off
              "--exclude-names-from", str(docs)])
    return env / "twins" / f"{docs.stem}_twins.json"


def train_args(preset: str, encoder: Path, docs: Path, twins: Path, out: Path, steps: int, device: str,
               tiny: bool) -> list[str]:
    from models.config import TrainConfig

    cfg = TrainConfig.from_file(preset)
    sets = [f"max_steps={steps}", f"device={device}", "progress=false", "eval_every_epoch=false", "save_every=0",
            "keep_epoch_checkpoints=false", "resume=false"]
    if tiny:
        sets += [*TINY, "dtype=fp32"]
    args = ["train", "--config", preset, "--encoder", str(encoder), "--train", str(docs), "--dev", str(docs),
            "--out", str(out)]
    if cfg.evrt:
        args += ["--twins", str(twins)]
    for s in sets:
        args += ["--set", s]
    return args


def passes_per_second(run: Path, docs_per_step: int) -> float | None:
    """Document passes a second over the run's steps (train.log's last field is each step's seconds)."""
    log = run / "train.log"
    times = [float(ln.rsplit(" ", 1)[1].rstrip("s")) for ln in log.read_text().splitlines()
             if ln.startswith("step ") and ln.endswith("s")] if log.is_file() else []
    return round(docs_per_step * len(times) / sum(times), 2) if times and sum(times) else None


def smoke_preset(preset: str, encoder: Path, docs: Path, twins: Path, out: Path, steps: int, device: str,
                 tiny: bool) -> dict[str, Any]:
    """Train ``steps`` steps with the preset, then predict with the run; the figures, or the error."""
    from models.config import TrainConfig

    cfg = TrainConfig.from_file(preset)
    run = out / preset
    row: dict[str, Any] = {"preset": preset, "encoder": str(encoder), "ok": False}
    t0 = time.time()
    try:
        envbench(train_args(preset, encoder, docs, twins, run, steps, device, tiny))
        row["train_seconds"] = round(time.time() - t0, 1)
        result = json.loads((run / "result.json").read_text())
        row["steps"] = result.get("steps", result.get("best", {}).get("step"))
        per_step = cfg.batch_size * cfg.grad_accum * (2 if cfg.evrt else 1)
        row["passes_per_second"] = passes_per_second(run, per_step)
        t1 = time.time()
        envbench(["predict", "--run", str(run), "--docs", str(docs), "--out", str(run / "pred.json"), "--force",
                  "--device", device])
        row["predict_seconds"] = round(time.time() - t1, 1)
        preds = json.loads((run / "pred.json").read_text())
        row["predictions"] = len(preds)
        row["ok"] = isinstance(preds, list)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - every failure is reported, and the smoke goes on
        row["error"] = f"{type(exc).__name__}: {exc}"
    return row


def smoke_torchrun(encoder: Path, docs: Path, out: Path, steps: int, device: str, tiny: bool) -> dict[str, Any]:
    """``torchrun --nproc_per_node 2`` of one preset: NCCL on two GPUs when there are two, else gloo on the CPU."""
    import torch

    ddp_device = "cuda" if device != "cpu" and torch.cuda.device_count() >= 2 else "cpu"
    run = out / f"torchrun-{TORCHRUN_PRESET}"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "envbench",
           *train_args(TORCHRUN_PRESET, encoder, docs, docs, run, steps, ddp_device, tiny)]
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    row = {"preset": TORCHRUN_PRESET, "processes": 2, "device": ddp_device, "seconds": round(time.time() - t0, 1),
           "ok": proc.returncode == 0 and (run / "best" / "model.pt").is_file()}
    if not row["ok"]:
        row["error"] = f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}"
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bert", type=Path, help="a local bert-base-cased folder (default: a tiny random BERT built here)")
    ap.add_argument("--roberta", type=Path, help="a local roberta-large folder (default: a tiny random RoBERTa)")
    ap.add_argument("--device", default="auto", help="auto (cuda if present), cpu, cuda, cuda:N")
    ap.add_argument("--docs", type=Path, default=SHARED / "re-docred" / "dev_revised.json",
                    help="DocRED-format documents (default: Re-DocRED dev from the shared data)")
    ap.add_argument("--n-docs", type=int, default=16, help="train and predict on the first N documents (default 16)")
    ap.add_argument("--steps", type=int, default=20, help="training steps per preset (default 20)")
    ap.add_argument("--presets", default="", help="comma-separated presets (default: every paper preset)")
    ap.add_argument("--no-torchrun", action="store_true", help="skip the 2-process torchrun")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "gpu-smoke", help="output folder (default runs/gpu-smoke)")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    import torch

    from envbench.formats.docred import read_docs
    from etl.io import write_json_atomic

    if args.threads:
        torch.set_num_threads(args.threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    presets = [p for p in args.presets.split(",") if p] or paper_presets()
    t_start = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    docs = read_docs(args.docs).docs[: args.n_docs]
    docs_path = args.out / "docs.json"
    write_json_atomic(docs_path, docs)
    tiny = {"bert": args.bert is None, "roberta": args.roberta is None}
    bert = args.bert or tiny_bert(args.out / "encoders" / "tiny-bert", docs)
    roberta = args.roberta or tiny_roberta(args.out / "encoders" / "tiny-roberta")
    twins = make_twins(docs_path, args.out)
    print(f"{len(docs)} documents, {args.steps} steps per preset, device {device}; encoders: "
          f"{'tiny BERT' if tiny['bert'] else bert}, {'tiny RoBERTa' if tiny['roberta'] else roberta}", flush=True)
    rows = []
    for preset in presets:
        kind = "roberta" if "roberta" in preset else "bert"
        encoder = roberta if kind == "roberta" else bert
        row = smoke_preset(preset, encoder, docs_path, twins, args.out, args.steps, device, tiny[kind])
        rows.append(row)
        print(f"{'ok  ' if row['ok'] else 'FAIL'} {preset:42} train {row.get('train_seconds', '-'):>6}s "
              f"{row.get('passes_per_second') or '-':>7} docs/s  predict {row.get('predict_seconds', '-'):>5}s"
              + (f"  {row['error']}" if not row["ok"] else ""), flush=True)
    ddp = None
    if not args.no_torchrun:
        ddp = smoke_torchrun(bert, docs_path, args.out, args.steps, device, tiny["bert"])
        print(f"{'ok  ' if ddp['ok'] else 'FAIL'} torchrun x2 {ddp['preset']} on {ddp['device']}: {ddp['seconds']}s"
              + (f"  {ddp['error']}" if not ddp["ok"] else ""), flush=True)
    seconds = round(time.time() - t_start, 1)
    failed = [r["preset"] for r in rows if not r["ok"]] + (["torchrun"] if ddp and not ddp["ok"] else [])
    write_json_atomic(args.out / "smoke.json", {"device": device, "documents": len(docs), "steps": args.steps,
                                                "tiny": tiny, "presets": rows, "torchrun": ddp, "seconds": seconds,
                                                "failed": failed}, indent=True)
    print(f"{len(rows) - len([r for r in rows if not r['ok']])} of {len(rows)} presets passed"
          + ("" if ddp is None else f", torchrun {'passed' if ddp['ok'] else 'failed'}") + f" in {seconds:.0f}s; "
          f"wrote {args.out / 'smoke.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
