"""bench/evrt: vanilla ATLOP vs EVRT (MiniLM, CPU) on Re-DocRED test and Env-Re-DocRED test.

The experiment is data: ``bench/evrt.toml`` lists its steps (command, inputs, outputs) and the
rules the runner keeps (skip a step whose manifest matches, clean a stale finished run, resume an
interrupted one). This file is the runner plus the three steps written in Python::

    python bench/evrt.py list [--var NAME=VALUE ...]           # each step and why it would run
    python bench/evrt.py run [STEP ...] [--var NAME=VALUE ...] [--force]
    python bench/evrt.py split | subset | copy | report ...     # the Python steps (called by run)

Re-DocRED's train split is absent here, so the models train on Re-DocRED dev: the first
``train_docs`` documents train, the rest select the checkpoint (dev F1 + Ign F1).
"""

from __future__ import annotations

import argparse
import glob
import gzip
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
from etl.io import sha256_file, write_bytes_atomic, write_json_atomic  # noqa: E402
from etl.manifest import code_fingerprint  # noqa: E402

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
    group: str = ""  # a name that selects several steps at once (`run train` for every step of group "train")


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
                clean=_expand(raw.get("clean", []), local, where), group=str(raw.get("group", "")),
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
        if not any(missing[0] in other.outputs for other in env.get("_steps", [])):
            raise ExperimentError(f"step {step.name}: input {missing[0]} does not exist and no step writes it; "
                                  "pass it with --var (see the file's [vars])")
        raise ExperimentError(f"step {step.name}: input {missing[0]} does not exist; run the step that writes it first")
    log = _abs(env["state"]) / f"{step.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    code = code_version()  # what the step's process imports as it starts
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
        "code": code,
        "inputs": {p: fingerprint(p) for p in resolved_inputs(step)},
        "outputs": {p: fingerprint(p) for p in step.outputs},
    }, indent=True)
    return seconds


def code_version() -> dict[str, Any]:
    """The code a step ran with: the fingerprint of envbench's packages (``etl.manifest.code_fingerprint``),
    the git commit and whether the work tree differed from it. The report refuses runs of two versions."""
    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
        except OSError:
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    status = git("status", "--porcelain", "--untracked-files=no")
    # hashed afresh for every step (code_fingerprint caches per process): the code may change while a long
    # experiment runs, and that is what the report must see
    return {"fingerprint": code_fingerprint.__wrapped__(), "commit": git("rev-parse", "HEAD"),
            "dirty": None if status is None else bool(status)}


def select(steps: list[Step], names: list[str], shard: str = "") -> list[Step]:
    """The steps named (a step's name, its name in the file, or its group; none = all), in file order; with
    ``shard`` "K/N" every N-th of them from the K-th (0-based), so that N jobs, one per GPU, share them."""
    known = {s.name for s in steps} | {s.base for s in steps} | {s.group for s in steps if s.group}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ExperimentError(f"no step {unknown[0]!r}; steps: {', '.join(dict.fromkeys(s.base for s in steps))}")
    chosen = [s for s in steps if not names or s.name in names or s.base in names or (s.group and s.group in names)]
    if not shard:
        return chosen
    k, sep, n = shard.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 0 <= int(k) < int(n)):
        raise ExperimentError(f"--shard {shard}: expected K/N with 0 <= K < N, e.g. 0/4 for the first of 4 jobs")
    return chosen[int(k)::int(n)]


def cmd_list(args: argparse.Namespace) -> None:
    env, steps = load_experiment(args.file, args.var)
    for step in select(steps, args.steps, args.shard):
        ok, why, _ = status(env, step)
        print(f"{'ok ' if ok else 'RUN'} {step.name:28} {why:40} {step.help}")


def cmd_run(args: argparse.Namespace) -> None:
    env, steps = load_experiment(args.file, args.var)
    env["_steps"] = steps  # to tell an input no step writes (a --var to pass) from one a step has yet to write
    for step in select(steps, args.steps, args.shard):
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


def cmd_copy(args: argparse.Namespace) -> None:
    """A DocRED-format file read (and so validated) and written under the experiment's own name."""
    docs = read_docs(args.src).docs
    args.dst.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(args.dst, docs)
    print(f"{args.dst}: {len(docs)} docs from {args.src}")


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


def _spread(values: list[float]) -> dict[str, float | None]:
    # one value has no spread: its sd is None, never a 0 that reads as a measured one (``has_spread``)
    return {"mean": round(statistics.mean(values), 2),
            "sd": round(statistics.stdev(values), 2) if has_spread(len(values)) else None,
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


PRED_SETS = ("test", "env")
COST_TARGET = 1.5  # the most test F1 EVRT may cost (points)
RECOVERY_TARGET = 0.5  # the least share of vanilla's fall EVRT should recover
RATIO_TARGET = 2.0  # the most an EVRT step may take, in vanilla steps


def run_folders(args: argparse.Namespace) -> dict[str, tuple[str, list[str], str, str]]:
    """variant -> (folder pattern, training seeds, train step, predict step), as bench/evrt.toml names them."""
    folders = {v: (f"{v}-s{{}}", list(args.seeds), f"train-{v}-{{}}", f"predict-{v}-{{}}-{{}}") for v in VARIANTS}
    folders |= {f"{m} vanilla": (f"{m}-vanilla-s{{}}", list(args.model_seeds), f"train-model-{m}-{{}}",
                                 f"predict-model-{m}-{{}}-{{}}") for m in args.models}
    return folders


def provenance(state: Path, steps: list[str]) -> dict[str, Any]:
    """The one code version and data version every reported run was made with, from the step manifests:
    an experiment whose arms were trained at two commits, or on two versions of a file, compares more
    than EVRT (the earlier five-seed mean pooled two commits and two data versions)."""
    versions: dict[str, list[str]] = {}
    for name in steps:
        path = state / f"{name}.json"
        if not path.is_file():
            continue
        man = json.loads(path.read_text())
        for rel, fp in (man.get("inputs") or {}).items():
            now = fingerprint(rel)
            if now is None or now["sha256"] != fp.get("sha256"):
                raise ExperimentError(f"step {name} was run on another version of {rel} than the one there now; "
                                      f"rerun it (python bench/evrt.py run {name} --force)")
        code = man.get("code") or {}
        versions.setdefault(code.get("fingerprint") or "unrecorded", []).append(name)
    if len(versions) > 1:
        (a, first), (b, second) = list(versions.items())[:2]
        raise ExperimentError(f"the runs were made with {len(versions)} versions of the code: {first[0]} with "
                              f"{a[:12]}, {second[0]} with {b[:12]}; rerun the older ones with --force at one commit")
    code = {}
    if versions:
        man = json.loads((state / f"{next(iter(versions.values()))[0]}.json").read_text())
        code = man.get("code") or {"fingerprint": "unrecorded"}
    return {"code": code, "steps": sum(len(v) for v in versions.values())}


def _gz(data: bytes) -> bytes:
    """gzip without a timestamp or a file name, so the same predictions give the same bytes."""
    import io

    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as fh:
        fh.write(data)
    return buf.getvalue()


def claims(cmp: dict[str, Any], step_ratio: float | None) -> list[str]:
    """The sentences the comparison supports, each with its interval; none says "met" where the interval
    does not lie on the target's side."""
    if not cmp:
        return []
    diff = cmp["difference_b_minus_a"]
    level = round(100 * diff["test_f1"]["level"])

    def ci(iv: dict[str, float], sign: float = 1.0) -> str:
        lo, hi = sorted((sign * 100 * iv["low"] + 0.0, sign * 100 * iv["high"] + 0.0))
        return f"{level}% CI [{lo:+.2f}, {hi:+.2f}]"

    out = []
    t = diff["test_f1"]
    cost = -100 * t["estimate"]
    if t["high"] < 0:
        out.append(f"EVRT costs {cost:.2f} F1 on test ({ci(t, -1)} of the cost).")
    elif t["low"] > 0:
        out.append(f"EVRT gains {-cost:.2f} F1 on test ({ci(t)}).")
    else:
        out.append(f"No measurable cost on test F1: EVRT minus vanilla {-cost:+.2f} ({ci(t)}).")
    worst, least = -100 * t["low"] + 0.0, -100 * t["high"] + 0.0  # the cost's interval (+ 0.0: never "-0.00")
    if worst <= COST_TARGET:
        out.append(f"Target (cost at most {COST_TARGET}): met, the interval allows at most {worst:.2f}.")
    elif least > COST_TARGET:
        out.append(f"Target (cost at most {COST_TARGET}): missed, the interval's least cost is {least:.2f}.")
    else:
        out.append(f"Target (cost at most {COST_TARGET}): not shown, the interval allows a cost up to {worst:.2f}.")
    if "env_f1" in diff:
        e, f = diff["env_f1"], diff["fall_f1"]
        out.append(f"EVRT raises Env F1 by {100 * e['estimate']:.2f} ({ci(e)})." if e["low"] > 0 else
                   f"EVRT lowers Env F1 by {-100 * e['estimate']:.2f} ({ci(e)})." if e["high"] < 0 else
                   f"No measurable difference in Env F1: {100 * e['estimate']:+.2f} ({ci(e)}).")
        out.append(f"The F1 fall shrinks by {-100 * f['estimate']:.2f} points ({ci(f, -1)})." if f["high"] < 0 else
                   f"The F1 fall grows by {100 * f['estimate']:.2f} points ({ci(f)})." if f["low"] > 0 else
                   f"No measurable change in the F1 fall: {100 * f['estimate']:+.2f} ({ci(f)}).")
        r = cmp.get("fall_recovered")
        if r is not None:
            verdict = ("met" if r["low"] >= RECOVERY_TARGET else "missed" if r["high"] < RECOVERY_TARGET
                       else "not shown")
            out.append(f"EVRT recovers {r['estimate']:.3f} of vanilla's fall ({level}% CI [{r['low']:.3f}, "
                       f"{r['high']:.3f}]); target (at least {RECOVERY_TARGET}): {verdict}.")
    if step_ratio is not None:
        out.append(f"An EVRT step takes {step_ratio:.2f} vanilla steps (median step times, mean over runs; no "
                   f"interval); target (at most {RATIO_TARGET}): {'met' if step_ratio <= RATIO_TARGET else 'missed'}.")
    return out


def cmd_report(args: argparse.Namespace) -> None:
    from envbench.scoring.compare import compare_counts, read_benchmark, run_counts, system_intervals

    out = args.out
    state = args.state or out / "steps"
    train_docs = read_docs(out / "data" / "train.json").docs
    sets = {name: read_docs(out / "data" / f"{name}.json").docs for name in PRED_SETS}
    overlap_path = out / "env" / "overlap.json"
    if not overlap_path.is_file():
        raise ExperimentError(f"{overlap_path} is missing: run the overlap step (envbench name-overlap) first")
    overlap = json.loads(overlap_path.read_text())
    if not overlap.get("ok"):
        raise ExperimentError(f"{overlap_path}: the name pools of twins, Env test and training overlap; fix them "
                              "and rerun before reporting")
    folders = run_folders(args)
    steps = [step.format(seed) for _, seeds, step, _ in folders.values() for seed in seeds]
    steps += [pred.format(seed, k) for _, seeds, _, pred in folders.values() for seed in seeds for k in PRED_SETS]
    results: dict[str, Any] = {
        "provenance": {**provenance(state, steps),
                       "gold": {f"data/{n}.json": sha256_file(out / "data" / f"{n}.json") for n in PRED_SETS}},
        "name_overlap": overlap, "runs": {}, "over_training_seeds": {}, "intervals": {}, "out": str(out),
    }
    bench = read_benchmark(out / "data" / "test.json", out / "data" / "env.json")
    counts: dict[str, dict[str, Any]] = {}
    for variant, (folder, seeds, _, _) in folders.items():
        runs = {seed: run_scores(out / folder.format(seed), sets, train_docs) for seed in seeds}
        runs = {seed: r for seed, r in runs.items() if r is not None}
        results["runs"][variant] = runs
        counts[variant] = {seed: run_counts(bench, out / folder.format(seed) / "pred-test.json",
                                            out / folder.format(seed) / "pred-env.json")
                           for seed in runs if (out / folder.format(seed) / "pred-env.json").is_file()}
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
        if counts[variant]:
            ivs = system_intervals(bench, list(counts[variant].values()), samples=args.samples)
            results["intervals"][variant] = {m: iv.as_dict() for m, iv in ivs.items()}
    paired = [seed for seed in args.seeds if seed in counts.get("vanilla", {}) and seed in counts.get("evrt", {})]
    cmp: dict[str, Any] = {}
    if paired:
        cmp = compare_counts(VARIANTS, bench, [counts["vanilla"][s] for s in paired],
                             [counts["evrt"][s] for s in paired], samples=args.samples).as_dict()
        cmp["seeds"] = paired
    results["comparison"] = cmp
    van, evr = (results["over_training_seeds"].get(v) for v in VARIANTS)
    ratio = (round(evr["step_seconds"]["mean"] / van["step_seconds"]["mean"], 2)
             if van and evr and van["step_seconds"] and evr["step_seconds"] else None)
    results["step_time_ratio_evrt_vanilla"] = ratio
    results["claims"] = claims(cmp, ratio)
    write_json_atomic(out / "results.json", results, indent=True)
    table = report_markdown(results)
    (out / "results.md").write_text(table, encoding="utf-8")
    if args.publish is not None:
        publish(args.publish, out, folders, results, table)
    print(table, end="")


def publish(dest: Path, out: Path, folders: dict[str, tuple[str, list[str], str, str]], results: dict[str, Any],
            table: str) -> None:
    """What recomputes every figure, for bench/results/: results.json, results.md, the name check and each
    run's predictions on test and Env test, gzip-compressed (deterministic bytes); the gold sets are not
    copied (they are Re-DocRED's), the steps before training rebuild them, and results.json holds their
    sha256."""
    dest.mkdir(parents=True, exist_ok=True)
    for folder, seeds, _, _ in folders.values():
        for seed in seeds:
            for name in PRED_SETS:
                src = out / folder.format(seed) / f"pred-{name}.json"
                if src.is_file():
                    write_bytes_atomic(dest / "predictions" / folder.format(seed) / f"pred-{name}.json.gz",
                                       _gz(src.read_bytes()))
    write_json_atomic(dest / "results.json", results, indent=True)
    write_json_atomic(dest / "overlap.json", results["name_overlap"], indent=True)
    (dest / "results.md").write_text(table, encoding="utf-8")


def recompute_commands(results: dict[str, Any], out: str = "runs/evrt") -> list[str]:
    """The commands that recompute the comparison from a published folder ($RESULTS) and the gold sets, which
    the steps before training rebuild into ``out`` (the experiment's out)."""
    cmp = results.get("comparison") or {}
    if not cmp:
        return []
    data = f"{out}/data"
    pred = "$RESULTS/predictions/{v}-s{s}/pred-{k}.json.gz"
    args = [f"--{side}-{k} {pred.format(v=v, s=s, k=k)}" for side, v in (("a", "vanilla"), ("b", "evrt"))
            for s in cmp["seeds"] for k in PRED_SETS]
    gold = results["provenance"]["gold"]
    return ["# RESULTS: the folder of this file; the gold sets: the steps before training, from ../shared/data",
            f"python bench/evrt.py run split kb index env-test twins overlap test-sets --var out={out} "
            f"--var test_docs={cmp['documents']}",
            f"sha256sum {data}/test.json {data}/env.json  # {gold['data/test.json'][:16]}..., "
            f"{gold['data/env.json'][:16]}...",
            f"envbench evaluate --gold {data}/test.json --pred {pred.format(v='evrt', s=cmp['seeds'][0], k='test')}",
            f"envbench compare --gold {data}/test.json --env-gold {data}/env.json \\",
            *[f"    {a} \\" for a in args],
            f"    --name-a vanilla --name-b evrt --samples {cmp['samples']} --seed {cmp['seed']}"]


def report_markdown(results: dict[str, Any]) -> str:
    def ms(s: dict | None) -> str:
        if not s:
            return "n/a"
        # a one-seed run or summary row has no spread (``has_spread``); a plain run's row has no "n"
        sd = None if s.get("sd") is None else f"{s['sd']}"
        return mean_std_text(f"{s['mean']}", sd, s.get("n", 2))

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
    if results.get("intervals"):
        lines += ["", "Each variant's figures with their 95% intervals (bootstrap over the test documents, each with "
                  "its Env copies, and over its training seeds):", "",
                  "| variant | test F1 | Env F1 | F1 fall |", "| --- | --- | --- | --- |"]
        for variant, ivs in results["intervals"].items():
            cells = [f"{100 * ivs[m]['estimate']:.2f} [{100 * ivs[m]['low']:.2f}, {100 * ivs[m]['high']:.2f}]"
                     if m in ivs else "n/a" for m in ("test_f1", "env_f1", "fall_f1")]
            lines.append(f"| {variant} | {' | '.join(cells)} |")
    cmp = results.get("comparison") or {}
    if cmp:
        docs = f"{cmp['documents']} test documents, each with its {cmp['env_copies']} Env copies"
        lines += ["", f"EVRT against vanilla, paired bootstrap over the {docs}, and over the training seeds "
                  f"{', '.join(cmp['seeds'])} (paired by seed); {cmp['samples']} samples, seed {cmp['seed']} "
                  "(`envbench compare`):", ""]
        lines += [f"- {c}" for c in results.get("claims", [])]
    if "name_overlap" in results:
        rows = results["name_overlap"]["rows"]
        lines += ["", "Name pools (`envbench name-overlap`): " + "; ".join(
            f"{r['left']} in {r['right']}: {r['shared']} of {r['of']}" for r in rows) + "."]
    prov = results.get("provenance")
    if prov and prov.get("code"):
        code = prov["code"]
        lines += ["", f"Every run at one code version: commit {code.get('commit') or 'unknown'}"
                  f"{' (with uncommitted changes)' if code.get('dirty') else ''}, code sha256 "
                  f"{str(code.get('fingerprint'))[:16]}... ({prov['steps']} training and prediction steps)."]
    if (commands := recompute_commands(results, results.get("out", "runs/evrt"))):
        lines += ["", "Recompute from the repository:", "", "```bash", *commands, "```"]
    if "targets" in results:  # a results.json of an earlier report
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
        p.add_argument("--shard", default="", metavar="K/N",
                       help="every N-th selected step from the K-th (0-based): N jobs, one per GPU, share the steps")
        if name == "run":
            p.add_argument("--force", action="store_true", help="run the selected steps even when up to date")
        p.set_defaults(fn=fn)
    p = sub.add_parser("split", help="split Re-DocRED dev into training and checkpoint-selection documents")
    p.add_argument("dev", type=Path, help="Re-DocRED dev_revised.json")
    p.add_argument("--train-docs", type=int, required=True, help="the first N documents train; the rest select")
    p.add_argument("--out", type=Path, required=True, help="folder for train.json and heldout.json")
    p.set_defaults(fn=cmd_split)
    p = sub.add_parser("copy", help="a DocRED-format file, validated, written under another name")
    p.add_argument("src", type=Path, help="the documents (e.g. your Re-DocRED train_revised.json)")
    p.add_argument("dst", type=Path, help="where the experiment reads them")
    p.set_defaults(fn=cmd_copy)
    p = sub.add_parser("subset", help="the first N test documents and their Env copies")
    p.add_argument("test", type=Path, help="Re-DocRED test_revised.json")
    p.add_argument("env", type=Path, help="its Env version (generate --seeds 5)")
    p.add_argument("--docs", type=int, default=0, help="the first N test documents (0 = all)")
    p.add_argument("--out", type=Path, required=True, help="folder for test.json and env.json")
    p.set_defaults(fn=cmd_subset)
    p = sub.add_parser("report", help="score every run and write results.json and results.md")
    p.add_argument("--out", type=Path, required=True, help="the experiment's output folder")
    p.add_argument("--state", type=Path, help="the step manifests' folder (default OUT/steps)")
    p.add_argument("--publish", type=Path,
                   help="also write results and each run's compressed predictions here (for bench/results/)")
    p.add_argument("--samples", type=int, default=2000, help="bootstrap samples of the intervals (default 2000)")
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
