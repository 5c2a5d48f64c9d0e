"""bench/pcr_push: how hard L_pcr's entropy term pushes gold relations the wrong way, under ATLOP's loss and NCRL's.

A SHORT mechanism check for the CPU presets' beta (issue 32 #5), not a training run. With a twin
identical to its document, the reference code's soft-BCE L_pcr is the entropy of sigma(m) summed
over relations (margins m = f_r - f_0), whose gradient -sigma'(m) m pushes every margin further
from the threshold on the side it already lies. For a gold relation still below the threshold
(m < 0) that push works against the classification loss: it holds the model on the all-"Na"
plateau. This trains vanilla ATLOP (cpu-minilm-vanilla settings: ATLOP's loss, MiniLM, one CPU
thread) for a few steps on the first Re-DocRED dev documents and, on each step's margins, takes
the gradients with respect to the margins of beta * L_pcr(m, m) and of L_clo + L_clp = 2 L(m)
(the project's own loss functions), for L = ATLOP's loss and L = NCRL's. Reported per loss: the
median over the gold relations with m < 0 of |beta dL_pcr/dm| / |d(2L)/dm|, at beta = 0.1 (a
ratio above 1: the gold relation is pushed further below the threshold), the ratio of the two
gradients' norms over all margins, and the beta that would give ATLOP's loss NCRL's norm ratio.
(NCRL's BCE clamps sigma(m) at 1e-8, so margins below about -18 get no gradient from it and count
as ratios above 1.)

    .venv/bin/python bench/pcr_push.py --steps 12 --docs 48
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHARED_DEV = REPO.parent / "shared" / "data" / "re-docred" / "dev_revised.json"


def push_ratios(logits, labels, loss: str, beta: float) -> tuple[list[float], float]:
    """|beta dL_pcr/dm| / |d(2 L)/dm| for every gold relation whose margin is below the threshold, and
    the ratio of the two gradients' L2 norms over all margins of the batch."""
    import torch

    from models.losses import classification_loss, pcr_loss

    m = (logits[:, 1:] - logits[:, :1]).detach().float().requires_grad_(True)
    full = torch.cat([torch.zeros_like(m[:, :1]), m], dim=1)  # every loss here depends on the margins only
    (g_cls,) = torch.autograd.grad(2 * classification_loss(loss, full, labels, 0.04), m)
    (g_pcr,) = torch.autograd.grad(beta * pcr_loss("soft_bce", full, full), m)
    stuck = (labels[:, 1:] > 0) & (m.detach() < 0)
    overall = float(g_pcr.norm() / g_cls.norm().clamp(min=1e-12))
    return (g_pcr[stuck].abs() / g_cls[stuck].abs().clamp(min=1e-12)).tolist(), overall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--docs", type=int, default=48)
    ap.add_argument("--beta", type=float, default=0.1)
    args = ap.parse_args()

    import torch

    from envbench.formats.docred import read_docs
    from models.checkpoints import build_model
    from models.config import TrainConfig
    from models.data import build_features, collate
    from models.encoder import default_encoder_path, hidden_size, load_tokenizer
    from models.losses import classification_loss

    torch.set_num_threads(1)
    cfg = TrainConfig.from_file("cpu-minilm-vanilla")
    cfg.encoder = default_encoder_path()
    cfg.emb_size = cfg.emb_size or hidden_size(cfg.encoder)
    torch.manual_seed(cfg.seed)
    docs = read_docs(SHARED_DEV).docs[: args.docs]
    feats, _ = build_features(docs, load_tokenizer(cfg.encoder), max_length=cfg.max_length, window=cfg.window)
    model = build_model(cfg, cfg.encoder, weights=True).train()
    opt = torch.optim.AdamW([{"params": [p for n, p in model.named_parameters() if n.startswith("encoder.")],
                              "lr": cfg.lr_encoder},
                             {"params": [p for n, p in model.named_parameters() if not n.startswith("encoder.")],
                              "lr": cfg.lr_classifier}], eps=cfg.adam_eps)
    rows, t0 = [], time.process_time()
    for step in range(args.steps):
        idx = [(step * cfg.batch_size + i) % len(feats) for i in range(cfg.batch_size)]
        b = collate([feats[i] for i in idx])
        out = model(b["input_ids"], b["attention_mask"], b["entity_pos"], b["hts"])
        row = {"step": step + 1}
        for loss in ("atlop", "ncrl"):
            r, overall = push_ratios(out["logits"], b["labels"], loss, args.beta)
            row[loss] = {"stuck": len(r), "median": round(statistics.median(r), 3) if r else None,
                         "over_1": sum(x > 1 for x in r), "all": round(overall, 3)}
        classification_loss("atlop", out["logits"], b["labels"]).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
        opt.step()
        opt.zero_grad(set_to_none=True)
        rows.append(row)
        print(json.dumps(row), flush=True)
    late = rows[len(rows) // 2:]
    med = {k: statistics.median([r[k]["median"] for r in late if r[k]["median"] is not None]) for k in ("atlop", "ncrl")}
    norm = {k: statistics.median([r[k]["all"] for r in late]) for k in ("atlop", "ncrl")}
    print(json.dumps({"beta": args.beta, "stuck_gold_median_ratio_second_half": med,
                      "all_margins_norm_ratio_second_half": norm,
                      "beta_matching_ncrl_all_margins": round(args.beta * norm["ncrl"] / max(norm["atlop"], 1e-12), 4),
                      "cpu_seconds": round(time.process_time() - t0, 1)}))


if __name__ == "__main__":
    main()
