"""bench/evrt: vanilla ATLOP vs EVRT (MiniLM, CPU) on Re-DocRED test and Env-Re-DocRED test.

The experiment is data: ``bench/evrt.toml`` lists its steps (command, inputs, outputs) and the
rules the runner keeps (skip a step whose manifest matches, clean a stale finished run, resume an
interrupted one). This file is the runner plus the three steps written in Python::

    python bench/evrt.py list [--var NAME=VALUE ...]           # each step and why it would run
    python bench/evrt.py run [STEP ...] [--var NAME=VALUE ...] [--force]
    python bench/evrt.py split | subset | report ...            # the Python steps (called by run)

Re-DocRED's train split is absent here, so the models train on Re-DocRED dev: the first
``train_docs`` documents train, the rest select the checkpoint (dev F1 + Ign F1).
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envbench.formats.docred import read_docs  # noqa: E402
from envbench.scoring.evaluate import has_spread, mean_std_text, spread_label  # noqa: E402
from etl.io import sha256_file, write_json_atomic  # noqa: E402

EXPERIMENT = REPO / "bench" / "evrt.toml"
VARIANTS = ("vanilla", "evrt")
METRICS = ("f1", "ign_f1", "precision", "recall")
_VAR = re.compile(r"\{(\w+)\}")


class ExperimentError(Exception):
    """A one-line problem with the experiment file or a step; printed without a traceback."""


# ---------------------------------------------------------------------------------------- the runner
@dataclass
class Step:
    name: str  # unique: the file's name, then the matrix values
    base: str  # the name in the file
    help: str
    cmd: list[str]
    inputs: list[str]  # patterns; see resolved_inputs
    outputs: list[str]
    clean: list[str]


def _substitute(text: str, env: dict[str, Any], where: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m[1] not in env:
            raise ExperimentError(f"{where}: unknown variable {{{m[1]}}}; define it in [vars]")
        value = env[m[1]]
        if isinstance(value, list):
            raise ExperimentError(f"{where}: {{{m[1]}}} is a list; use it as a whole cmd item or as a matrix")
        return str(value)

    return _VAR.sub(one, text)


def _expand(items: list[str], env: dict[str, Any], where: str) -> list[str]:
    out: list[str] = []
    for item in items:
        whole = _VAR.fullmatch(item)
        if whole and isinstance(env.get(whole[1]), list):
            out += [str(v) for v in env[whole[1]]]
        else:
            out.append(_substitute(item, env, where))
    return out


def load_experiment(path: Path = EXPERIMENT, overrides: list[str] | tuple[str, ...] = ()) -> tuple[dict, list[Step]]:
    """The experiment's variables and its steps, matrices expanded, in file order."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ExperimentError(f"{path}: cannot read the experiment ({exc})") from None
    raw_vars = {k: v if isinstance(v, list) else str(v) for k, v in data.get("vars", {}).items()}
    for pair in overrides:
        name, sep, value = pair.partition("=")
        if not sep or name not in raw_vars:
            raise ExperimentError(f"--var {pair}: expected NAME=VALUE with NAME one of {', '.join(raw_vars)}")
        raw_vars[name] = value.split(",") if isinstance(raw_vars[name], list) else value
    env: dict[str, Any] = {"python": sys.executable}
    for name, value in raw_vars.items():  # in file order: each may use the earlier ones
        env[name] = ([_substitute(str(v), env, f"{path} [vars] {name}") for v in value] if isinstance(value, list)
                     else _substitute(value, env, f"{path} [vars] {name}"))
    steps: list[Step] = []
    for raw in data.get("steps", []):
        where = f"{path} step {raw.get('name', '?')}"
        if not isinstance(raw.get("name"), str) or not isinstance(raw.get("cmd"), list):
            raise ExperimentError(f"{where}: every step needs a name and a cmd list")
        axes = {}
        for key, values in raw.get("matrix", {}).items():
            values = _expand([values] if isinstance(values, str) else list(values), env, where)
            axes[key] = values
        for combo in itertools.product(*axes.values()):
            local = {**env, **dict(zip(axes, combo))}
            steps.append(Step(
                name="-".join([raw["name"], *combo]), base=raw["name"],
                help=_substitute(raw.get("help", ""), local, where), cmd=_expand(raw["cmd"], local, where),
                inputs=_expand(raw.get("inputs", []), local, where), outputs=_expand(raw.get("outputs", []), local, where),
                clean=_expand(raw.get("clean", []), local, where),
            ))
    names = [s.name for s in steps]
    if len(set(names)) != len(names):
        raise ExperimentError(f"{path}: two steps are named {next(n for n in names if names.count(n) > 1)}")
    return env, steps


def _abs(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else REPO / p


def resolved_inputs(step: Step) -> list[str]:
    """Input paths, ``*`` patterns expanded (sorted, so the manifest is stable)."""
    out: list[str] = []
    for pattern in step.inputs:
        if glob.has_magic(pattern):
            out += sorted(str(Path(p).relative_to(REPO)) if not Path(pattern).is_absolute() else p
                          for p in glob.glob(str(_abs(pattern))))
        else:
            out.append(pattern)
    return out


def fingerprint(path: str, old: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """sha256 (with size and mtime, which spare rehashing an untouched file); None when missing."""
    p = _abs(path)
    if not p.is_file():
        return None
    st = p.stat()
    if old and old.get("bytes") == st.st_size and old.get("mtime_ns") == st.st_mtime_ns and old.get("sha256"):
        return old
    return {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256_file(p)}


def stable_cmd(step: Step) -> list[str]:
    """The command as the manifest keeps it: the interpreter as {python}, so another venv path is no change."""
    return ["{python}" if item == sys.executable else item for item in step.cmd]


def manifest_path(env: dict[str, Any], step: Step) -> Path:
    return _abs(env["state"]) / f"{step.name}.json"


def status(env: dict[str, Any], step: Step) -> tuple[bool, str, dict | None]:
    """(up to date, why not, the previous manifest)."""
    try:
        old = json.loads(manifest_path(env, step).read_text())
    except (OSError, ValueError):
        return False, "never finished", None
    if not isinstance(old, dict) or old.get("cmd") != stable_cmd(step):
        return False, "command changed", old
    inputs = resolved_inputs(step)
    if sorted(old.get("inputs", {})) != sorted(inputs):
        return False, "other input files", old
    for kind, paths in (("input", inputs), ("output", step.outputs)):
        for p in paths:
            before = old.get(kind + "s", {}).get(p)
            now = fingerprint(p, before)
            if now is None:
                return False, f"{kind} missing: {p}", old
            if not before or now["sha256"] != before.get("sha256"):
                return False, f"{kind} changed: {p}", old
    return True, "up to date", old


def run_step(env: dict[str, Any], step: Step, *, force: bool) -> float:
    """Run one step (cleaning a stale finished run first), check its outputs, write its manifest."""
    _, why, old = status(env, step)
    for folder in step.clean if (old is not None or force) else []:
        target, root = _abs(folder).resolve(), _abs(env["out"]).resolve()
        if root not in target.parents:
            raise ExperimentError(f"step {step.name}: clean {folder} is not inside out={env['out']}; fix the file")
        if target.exists():
            print(f"  clean {folder} ({'forced' if force else why})", flush=True)
            shutil.rmtree(target)
    missing = [p for p in resolved_inputs(step) if fingerprint(p) is None]
    if missing:
        raise ExperimentError(f"step {step.name}: input {missing[0]} does not exist; run the step that writes it first")
    log = _abs(env["state"]) / f"{step.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(step.cmd)}\n")
        fh.flush()
        rc = subprocess.run(step.cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO).returncode
    seconds = round(time.time() - t0, 1)
    if rc:
        raise ExperimentError(f"step {step.name} failed (exit {rc}) after {seconds:.0f}s; see {log}")
    absent = [p for p in step.outputs if fingerprint(p) is None]
    if absent:
        raise ExperimentError(f"step {step.name} exited 0 but did not write {absent[0]}; see {log}")
    write_json_atomic(manifest_path(env, step), {
        "step": step.name, "cmd": stable_cmd(step), "seconds": seconds, "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "inputs": {p: fingerprint(p) for p in resolved_inputs(step)},
        "outputs": {p: fingerprint(p) for p in step.outputs},
    }, indent=True)
    return seconds


def select(steps: list[Step], names: list[str]) -> list[Step]:
    known = {s.name for s in steps} | {s.base for s in steps}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ExperimentError(f"no step {unknown[0]!r}; steps: {', '.join(dict.fromkeys(s.base for s in steps))}")
    return [s for s in steps if not names or s.name in names or s.base in names]


def cmd_list(args: argparse.Namespace) -> None:
    env, steps = load_experiment(args.file, args.var)
    for step in select(steps, args.steps):
        ok, why, _ = status(env, step)
        print(f"{'ok ' if ok else 'RUN'} {step.name:28} {why:40} {step.help}")


def cmd_run(args: argparse.Namespace) -> None:
    env, steps = load_experiment(args.file, args.var)
    for step in select(steps, args.steps):
        ok, why, _ = status(env, step)
        if ok and not args.force:
            print(f"skip {step.name} (up to date)", flush=True)
            continue
        print(f"run  {step.name} ({'forced' if args.force else why}): {step.help}", flush=True)
        seconds = run_step(env, step, force=args.force)
        print(f"     {step.name} done in {seconds:.0f}s", flush=True)


# ----------------------------------------------------------------------------------- the Python steps
def cmd_split(args: argparse.Namespace) -> None:
    docs = read_docs(args.dev).docs
    if not 0 < args.train_docs < len(docs):
        raise ExperimentError(f"--train-docs {args.train_docs}: {args.dev} has {len(docs)} documents; leave some to select")
    write_json_atomic(args.out / "train.json", docs[: args.train_docs])
    write_json_atomic(args.out / "heldout.json", docs[args.train_docs :])
    print(f"{args.out}/train.json: {args.train_docs} docs; heldout.json: {len(docs) - args.train_docs} docs")


def _source_title(env_title: str) -> str:
    return env_title.rsplit("-", 1)[0]


def cmd_subset(args: argparse.Namespace) -> None:
    """The first N test documents and the Env copies ("<title>-k") of exactly those."""
    test = read_docs(args.test).docs[: args.docs or None]
    keep = {d["title"] for d in test}
    env = [d for d in read_docs(args.env).docs if _source_title(d["title"]) in keep]
    write_json_atomic(args.out / "test.json", test)
    write_json_atomic(args.out / "env.json", env)
    print(f"{args.out}/test.json: {len(test)} docs; env.json: {len(env)} docs")


def _score(gold: list[dict], preds: list[dict], train_docs: list[dict]) -> dict[str, float]:
    from envbench.scoring.metrics import score

    s = score(gold, preds, train_docs)
    return {k: round(100 * float(s[k]), 2) for k in METRICS}


def _spread(values: list[float]) -> dict[str, float]:
    return {"mean": round(statistics.mean(values), 2),
            "sd": round(statistics.stdev(values), 2) if has_spread(len(values)) else 0.0,
            "min": min(values), "max": max(values), "n": len(values)}


def step_seconds(train_log: Path) -> float | None:
    """Median seconds per optimizer step in a train.log (the last field of each line, e.g. "1.23s")."""
    times = [float(line.rsplit(" ", 1)[1].rstrip("s")) for line in train_log.read_text().splitlines()
             if line.startswith("step ") and line.endswith("s")] if train_log.is_file() else []
    return round(statistics.median(times), 3) if times else None


def run_scores(run: Path, sets: dict[str, list[dict]], train_docs: list[dict]) -> dict[str, Any] | None:
    """One training run's scores: test, Env per renaming seed with mean and sd, Env pooled, the F1 fall."""
    if not (run / "pred-test.json").is_file():
        return None
    cfg = json.loads((run / "config.json").read_text()) if (run / "config.json").is_file() else {}
    res: dict[str, Any] = {
        "config": {k: cfg.get(k) for k in ("seed", "epochs", "loss", "evrt", "alpha", "beta", "rcr_repr", "pcr_form",
                                           "lr_encoder", "lr_classifier", "emb_size", "max_steps")},
        "result": json.loads((run / "result.json").read_text()) if (run / "result.json").is_file() else {},
        "step_seconds": step_seconds(run / "train.log"),
        "test": _score(sets["test"], json.loads((run / "pred-test.json").read_text()), train_docs),
    }
    if (run / "pred-env.json").is_file():
        gold, preds = sets["env"], json.loads((run / "pred-env.json").read_text())
        copies = sorted({d["title"].rsplit("-", 1)[1] for d in gold}, key=int)
        per_seed = {k: _score([d for d in gold if d["title"].rsplit("-", 1)[1] == k],
                              [p for p in preds if p["title"].rsplit("-", 1)[1] == k], train_docs) for k in copies}
        res["env_per_renaming_seed"] = per_seed
        res["env"] = {m: _spread([v[m] for v in per_seed.values()]) for m in METRICS}
        res["env_pooled"] = _score(gold, preds, train_docs)  # all copies as one file, as the reference prints
        res["fall_f1"] = round(res["test"]["f1"] - res["env"]["f1"]["mean"], 2)
    return res


def cmd_report(args: argparse.Namespace) -> None:
    out = args.out
    train_docs = read_docs(out / "data" / "train.json").docs
    sets = {name: read_docs(out / "data" / f"{name}.json").docs for name in ("test", "env")}
    results: dict[str, Any] = {"runs": {}, "over_training_seeds": {}}
    folders = {variant: (f"{variant}-s{{}}", args.seeds) for variant in VARIANTS}
    folders |= {f"{model} vanilla": (f"{model}-vanilla-s{{}}", args.model_seeds) for model in args.models}
    for variant, (folder, seeds) in folders.items():
        runs = {seed: run_scores(out / folder.format(seed), sets, train_docs) for seed in seeds}
        runs = {seed: r for seed, r in runs.items() if r is not None}
        results["runs"][variant] = runs
        if not runs:
            continue
        agg = {f"test_{m}": _spread([r["test"][m] for r in runs.values()]) for m in METRICS}
        with_env = [r for r in runs.values() if "env" in r]
        if with_env:
            agg |= {f"env_{m}": _spread([r["env"][m]["mean"] for r in with_env]) for m in METRICS}
            agg["env_pooled_f1"] = _spread([r["env_pooled"]["f1"] for r in with_env])
            agg["fall_f1"] = _spread([r["fall_f1"] for r in with_env])
        times = [r["step_seconds"] for r in runs.values() if r["step_seconds"]]
        agg["step_seconds"] = _spread(times) if times else None
        results["over_training_seeds"][variant] = agg
    van, evr = (results["over_training_seeds"].get(v) for v in VARIANTS)
    if van and evr:
        targets: dict[str, Any] = {
            "evrt_cost_test_f1": round(van["test_f1"]["mean"] - evr["test_f1"]["mean"], 2),
            "target_cost_at_most": 1.5,
        }
        if "fall_f1" in van and "fall_f1" in evr and van["fall_f1"]["mean"]:
            targets["evrt_recovers_of_vanilla_fall"] = round(1 - evr["fall_f1"]["mean"] / van["fall_f1"]["mean"], 3)
            targets["target_recovery_at_least"] = 0.5
        if van["step_seconds"] and evr["step_seconds"]:
            targets["step_time_ratio_evrt_vanilla"] = round(evr["step_seconds"]["mean"] / van["step_seconds"]["mean"], 2)
            targets["target_ratio_at_most"] = 2.0
        results["targets"] = targets
    write_json_atomic(out / "results.json", results, indent=True)
    table = report_markdown(results)
    (out / "results.md").write_text(table, encoding="utf-8")
    print(table, end="")


def report_markdown(results: dict[str, Any]) -> str:
    def ms(s: dict | None) -> str:
        if not s:
            return "n/a"
        # a one-seed run or summary row has no spread (``has_spread``); a plain run's row has no "n"
        return mean_std_text(f"{s['mean']}", f"{s['sd']}", s.get("n", 2))

    lines = ["Scores in %. Per run, Env is the mean ± sd over the 5 renaming seeds; the summary rows are the",
             "mean ± sd over training seeds (of each run's Env mean).", "",
             "| variant | training seed | test F1 | test Ign F1 | Env F1 | Env pooled F1 | F1 fall | s/step |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for variant, runs in results["runs"].items():
        for seed, r in runs.items():
            lines.append(f"| {variant} | {seed} | {r['test']['f1']} | {r['test']['ign_f1']} | "
                         f"{ms(r.get('env', {}).get('f1'))} | {r.get('env_pooled', {}).get('f1', 'n/a')} | "
                         f"{r.get('fall_f1', 'n/a')} | {r['step_seconds']} |")
    for variant, agg in results["over_training_seeds"].items():
        label = spread_label(agg["test_f1"]["n"], "mean ± sd")
        lines.append(f"| **{variant}** | {label} | {ms(agg['test_f1'])} | {ms(agg['test_ign_f1'])} | "
                     f"{ms(agg.get('env_f1'))} | {ms(agg.get('env_pooled_f1'))} | {ms(agg.get('fall_f1'))} | "
                     f"{ms(agg['step_seconds'])} |")
    if "targets" in results:
        lines += ["", "Targets: " + json.dumps(results["targets"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    for name, fn, what in (("list", cmd_list, "show each step and why it would run"),
                           ("run", cmd_run, "run the steps that are not up to date, in file order")):
        p = sub.add_parser(name, help=what)
        p.add_argument("steps", nargs="*", help="step names (a name also matches its matrix copies); none = all")
        p.add_argument("--var", action="append", default=[], metavar="NAME=VALUE", help="override a [vars] value")
        p.add_argument("--file", type=Path, default=EXPERIMENT, help="the experiment file (default bench/evrt.toml)")
        if name == "run":
            p.add_argument("--force", action="store_true", help="run the selected steps even when up to date")
        p.set_defaults(fn=fn)
    p = sub.add_parser("split", help="split Re-DocRED dev into training and checkpoint-selection documents")
    p.add_argument("dev", type=Path, help="Re-DocRED dev_revised.json")
    p.add_argument("--train-docs", type=int, required=True, help="the first N documents train; the rest select")
    p.add_argument("--out", type=Path, required=True, help="folder for train.json and heldout.json")
    p.set_defaults(fn=cmd_split)
    p = sub.add_parser("subset", help="the first N test documents and their Env copies")
    p.add_argument("test", type=Path, help="Re-DocRED test_revised.json")
    p.add_argument("env", type=Path, help="its Env version (generate --seeds 5)")
    p.add_argument("--docs", type=int, default=0, help="the first N test documents (0 = all)")
    p.add_argument("--out", type=Path, required=True, help="folder for test.json and env.json")
    p.set_defaults(fn=cmd_subset)
    p = sub.add_parser("report", help="score every run and write results.json and results.md")
    p.add_argument("--out", type=Path, required=True, help="the experiment's output folder")
    p.add_argument("--seeds", nargs="+", required=True, help="training seeds (run folders <variant>-s<seed>)")
    p.add_argument("--models", nargs="*", default=[], help="other models' vanilla runs (folders <model>-vanilla-s<seed>)")
    p.add_argument("--model-seeds", nargs="*", default=[], help="training seeds of the --models runs")
    p.set_defaults(fn=cmd_report)
    args = ap.parse_args(argv)
    try:
        args.fn(args)
    except ExperimentError as exc:
        raise SystemExit(f"error: {exc}") from None


if __name__ == "__main__":
    main()
