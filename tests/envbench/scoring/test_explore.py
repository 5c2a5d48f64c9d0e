"""envbench explore: the site's data files, its errors, and the page in a real browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from envbench.scoring.explore import build_site
from tests.envbench.cli.invoke import run as _run


def _doc(title: str, names: list[str], labels: list[tuple[int, int, str]]) -> dict[str, Any]:
    sents = [names[:2] + ["met"] + names[2:]]
    vertex = []
    pos = 0
    for i, name in enumerate(names):
        vertex.append([{"name": name, "sent_id": 0, "pos": [pos, pos + 1], "type": "PER" if i < 2 else "LOC"}])
        pos += 2 if i == 1 else 1
    return {"title": title, "sents": sents, "vertexSet": vertex,
            "labels": [{"h": h, "t": t, "r": r, "evidence": [0]} for h, t, r in labels]}


def _world(tmp: Path) -> dict[str, Path]:
    labels = [(0, 1, "P26"), (1, 0, "P26"), (0, 2, "P27")]
    orig = [_doc("Anna", ["Anna", "Bob", "Oslo"], labels)]
    env = [_doc("Anna-1", ["Kira", "Lev", "Pune"], labels), _doc("Anna-2", ["Mia", "Ned", "Lima"], labels)]
    p0 = [{"title": "Anna", "h_idx": h, "t_idx": t, "r": r} for h, t, r in labels] + \
         [{"title": "Anna", "h_idx": 2, "t_idx": 0, "r": "P17"}]  # a false positive
    pk = [{"title": "Anna-1", "h_idx": 0, "t_idx": 1, "r": "P26"},  # twin 1 loses two facts
          {"title": "Anna-2", "h_idx": 0, "t_idx": 1, "r": "P26"}, {"title": "Anna-2", "h_idx": 1, "t_idx": 0, "r": "P26"},
          {"title": "Anna-2", "h_idx": 0, "t_idx": 2, "r": "P27"},
          {"title": "Nobody-1", "h_idx": 0, "t_idx": 1, "r": "P26"}]
    paths = {}
    for name, obj in (("orig", orig), ("env", env), ("p0", p0), ("pk", pk)):
        paths[name] = tmp / f"{name}.json"
        paths[name].write_text(json.dumps(obj))
    return paths


def _data(site: Path, rel: str) -> Any:
    text = (site / rel).read_text()
    body = text.split("] = ", 1)[1].rstrip().rstrip(";")
    return json.loads(body)


def test_lost_gained_and_f1_per_twin(tmp_path: Path) -> None:
    w = _world(tmp_path)
    res = build_site(w["env"], w["orig"], tmp_path / "site", original_pred=w["p0"], env_pred=w["pk"])
    assert (res.documents, res.twins, res.seeds) == (1, 2, [1, 2])
    assert res.unknown_prediction_titles == {"--original-pred": 0, "--env-pred": 1}
    index = _data(tmp_path / "site", "data/index.js")
    (row,) = index["documents"]
    assert row["title"] == "Anna" and row["consistency_failures"] is True
    assert row["f1_original"] == round(2 * 3 / 7, 4)  # 3 correct of 4 predicted, 3 gold
    assert row["f1_twins"] == round((round(2 * 1 / 4, 4) + 1.0) / 2, 4)
    doc = _data(tmp_path / "site", "data/docs/0000.js")
    t1, t2 = doc["twins"]["1"]["facts"], doc["twins"]["2"]["facts"]
    assert t1["lost"] == [[0, 2, "P27"], [1, 0, "P26"]] and t1["both"] == [[0, 1, "P26"]] and t1["gained"] == []
    assert t2["lost"] == [] and len(t2["both"]) == 3
    assert doc["original_fp"] == [[2, 0, "P17"]]
    assert doc["twins"]["1"]["doc"]["entities"][0]["name"] == "Kira"
    cons = index["summary"]["consistency"]
    assert cons["P26"] == {"name": "spouse", "correct_on_original": 4, "still_correct": 3, "rate": 0.75}
    assert cons["P27"]["rate"] == 0.5
    assert index["summary"]["relations"]["P27"] == "country of citizenship"


def test_names_never_close_the_script_element(tmp_path: Path) -> None:
    w = _world(tmp_path)
    env = json.loads(w["env"].read_text())
    env[0]["sents"][0][0] = "</script><b>"
    env[0]["vertexSet"][0][0]["name"] = "</script><b>"
    w["env"].write_text(json.dumps(env))
    build_site(w["env"], w["orig"], tmp_path / "site")
    text = (tmp_path / "site" / "data" / "docs" / "0000.js").read_text()
    assert "</script" not in text and "<\\/script><b>" in text


def test_rebuild_is_identical_and_up_to_date(tmp_path: Path) -> None:
    w = _world(tmp_path)
    site = tmp_path / "site"
    build_site(w["env"], w["orig"], site, original_pred=w["p0"], env_pred=w["pk"])
    first = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    assert build_site(w["env"], w["orig"], site, original_pred=w["p0"], env_pred=w["pk"]).up_to_date
    build_site(w["env"], w["orig"], site, original_pred=w["p0"], env_pred=w["pk"], force=True)
    assert {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()} == first




def test_cli_errors_name_the_file_and_the_fix(tmp_path: Path) -> None:
    w = _world(tmp_path)
    stray = json.loads(w["env"].read_text()) + [_doc("Other-1", ["A", "B", "C"], [])]
    bad_env = tmp_path / "bad_env.json"
    bad_env.write_text(json.dumps(stray))
    code, out = _run("explore", "--env-gold", str(bad_env), "--original-gold", str(w["orig"]), "--out",
                     str(tmp_path / "s"))
    assert (code, out) == (1, f"Error: --env-gold {bad_env}: 1 title matches no document of {w['orig']} (first: "
                              "'Other-1'); pass the original gold file the benchmark was generated from\n")
    code, out = _run("explore", "--env-gold", str(w["env"]), "--original-gold", str(w["orig"]), "--original-pred",
                     str(w["p0"]), "--out", str(tmp_path / "s"))
    assert code == 2 and out.endswith("Error: --original-pred and --env-pred go together: lost facts compare the two\n")
    code, out = _run("explore", "--env-gold", str(w["env"]), "--original-gold", str(w["orig"]), "--original-pred",
                     str(w["orig"]), "--env-pred", str(w["pk"]), "--out", str(tmp_path / "s"))
    assert (code, out) == (1, f"Error: {w['orig']}: holds DocRED documents (title, sents, vertexSet), not predictions; "
                              "give it as the gold file, and as predictions the model's JSON list of {title, h_idx, "
                              "t_idx, r}\n")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"title": "Anna", "h_idx": 0, "t_idx": 9, "r": "P26"}]))
    code, out = _run("explore", "--env-gold", str(w["env"]), "--original-gold", str(w["orig"]), "--original-pred",
                     str(bad), "--env-pred", str(w["pk"]), "--out", str(tmp_path / "s"))
    assert code == 1 and out.startswith(f"Error: --original-pred {bad}: ")
    assert not (tmp_path / "s").exists()
    code, out = _run("explore", "--env-gold", str(w["env"]), "--original-gold", str(w["orig"]), "--index",
                     str(tmp_path), "--out", str(tmp_path / "s"))
    assert (code, out) == (1, f"Error: no index at {tmp_path}; run `envbench ingest-dump DUMP --out {tmp_path}` first\n")
    assert not (tmp_path / "s").exists()
    code, out = _run("explore", "--env-gold", str(w["env"]), "--original-gold", str(w["orig"]), "--original-pred",
                     str(w["p0"]), "--env-pred", str(w["pk"]), "--out", str(tmp_path / "s"))
    assert code == 0
    assert out.splitlines()[1] == "warning: 1 prediction names a title not in the gold file of --env-pred; ignored"


def test_twins_with_other_entities_are_refused(tmp_path: Path) -> None:
    w = _world(tmp_path)
    env = json.loads(w["env"].read_text())
    env[1]["vertexSet"].pop()
    env[1]["labels"] = [lab for lab in env[1]["labels"] if lab["t"] != 2]
    w["env"].write_text(json.dumps(env))
    code, out = _run("explore", "--env-gold", str(w["env"]), "--original-gold", str(w["orig"]), "--out",
                     str(tmp_path / "s"))
    assert (code, out) == (1, f"Error: --env-gold {w['env']}: 'Anna-2' has 2 entities but 'Anna' has 3; a twin keeps "
                              "its source's entities, so these files do not belong together\n")


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _browser(url: str, *extra: str, profile: Path) -> str:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--virtual-time-budget=5000", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium)")
def test_the_page_renders_in_a_real_browser(tmp_path: Path) -> None:
    from tests.envbench.index_fixture import sample_world

    sw = sample_world()
    env_dir = tmp_path / "env"
    from envbench.rename.generate import generate

    generate(sw.test, sw.index, env_dir, links=sw.links, seeds=2, progress=False, allow_training_names=True)
    env = env_dir / "test_env.json"
    orig_docs = json.loads(Path(sw.test).read_text())
    env_docs = json.loads(env.read_text())
    p0 = [{"title": d["title"], "h_idx": x["h"], "t_idx": x["t"], "r": x["r"]} for d in orig_docs for x in d["labels"]]
    pk = [{"title": d["title"], "h_idx": x["h"], "t_idx": x["t"], "r": x["r"]}
          for d in env_docs for i, x in enumerate(d["labels"]) if i % 2]
    (tmp_path / "p0.json").write_text(json.dumps(p0))
    (tmp_path / "pk.json").write_text(json.dumps(pk))
    site = tmp_path / "site"
    build_site(env, sw.test, site, original_pred=tmp_path / "p0.json", env_pred=tmp_path / "pk.json", index=sw.index)
    url = (site / "index.html").as_uri()
    listing = _browser(url, "--dump-dom", profile=tmp_path / "prof")
    assert ">human (Q5)</option>" in listing  # the fine-type filter, labelled from --index
    first = orig_docs[0]["title"]
    assert f"{len(orig_docs)} of {len(orig_docs)} documents" in listing and f"<td>{first}</td>" in listing
    page = _browser(url + "#/doc/0/2", "--dump-dom", profile=tmp_path / "prof")
    assert f"<h2>{first}</h2>" in page and f"{first}-2</h3>" in page  # side-by-side headings
    assert "Lost on the twin (" in page  # the lost-triples list
    twin_name = env_docs[1]["vertexSet"][0][0]["name"]  # seed 2 of document 1: a renamed mention
    assert twin_name in page
    assert "<h3>Kept names (" in page or "<h3>Kept names</h3>" in page  # kept reasons in words, no hover needed
    summary = _browser(url + "#/summary", "--dump-dom", profile=tmp_path / "prof")
    assert "Consistency per relation" in summary and "Substitution rate by type" in summary
    assert "F1, original against Env" in summary and "<td>seed 2</td>" in summary and "a drop of" in summary
    by_drop = _browser(url + "#/sort/f1_drop/desc", "--dump-dom", profile=tmp_path / "prof")
    rows = re.findall(r'<tr class="doc-row" data-n="(\d+)"', by_drop)
    drops = {d["n"]: d["f1_drop"] for d in _data(site, "data/index.js")["documents"]}
    assert len(rows) == len(orig_docs) and [drops[int(n)] for n in rows] == sorted(drops.values(), reverse=True)
    assert "F1 drop ▼" in by_drop and "kept because" in by_drop
    missing = _browser(url + f"#/doc/{len(orig_docs)}", "--dump-dom", profile=tmp_path / "prof")
    assert f"There is no document {len(orig_docs)}: the documents are numbered 0 to {len(orig_docs) - 1}" in missing
    shot = tmp_path / "doc.png"
    _browser(url + "#/doc/0/2", "--window-size=1400,900", f"--screenshot={shot}", profile=tmp_path / "prof")
    assert shot.stat().st_size > 10_000


def test_an_index_gives_qids_and_fine_types_their_labels(tmp_path: Path) -> None:
    from envbench.rename.generate import generate
    from tests.envbench.index_fixture import sample_world
    from wikidata_index.index import WikidataIndex

    sw = sample_world()
    generate(sw.test, sw.index, tmp_path / "env", links=sw.links, seeds=1, progress=False, allow_training_names=True)
    site = tmp_path / "site"
    build_site(tmp_path / "env" / "test_env.json", sw.test, site, index=sw.index)
    summary = _data(site, "data/index.js")["summary"]
    with WikidataIndex(sw.index) as ix:
        assert summary["fine_type_labels"] == ix.labels_of(summary["fine_types"])
        assert summary["fine_type_labels"]["Q5"] == ix.entity("Q5")["label"]
        rows = [s for f in sorted((site / "data" / "docs").glob("*.js")) for t in _data(site, f"data/docs/{f.name}")
                ["twins"].values() for s in t["substitutions"] if s["kind"] == "linked"]
        assert rows and all(s["labels"] == ix.labels_of([s["qid"], s["new_qid"], s["fine_type"]]) for s in rows)
        # every substitution explains itself (issue 31): the classes it was drawn by, with their labels
        assert all(s["drawn_by"] and s["drawn_by"][0] == s["fine_type"] for s in rows)
        assert all(s["class_labels"] == ix.labels_of([*s["drawn_by"], *s["catch_all"]]) for s in rows)
        assert all({"catch_all", "head_noun", "adjectival", "written"} <= s.keys() for s in rows)
    # the index is an input: the same site is up to date, without it the site is rebuilt (no labels)
    assert build_site(tmp_path / "env" / "test_env.json", sw.test, site, index=sw.index).up_to_date
    build_site(tmp_path / "env" / "test_env.json", sw.test, site)
    assert _data(site, "data/index.js")["summary"]["fine_type_labels"] == {}


def test_report_plots_are_copied_but_links_and_other_files_are_refused(tmp_path: Path) -> None:
    # the site is made to be published: "evil.png" -> /etc/shadow must never be copied into it
    w = _world(tmp_path)
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "f1.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    base = ("explore", "--env-gold", str(w["env"]), "--original-gold", str(w["orig"]), "--report", str(rep))
    secret = tmp_path / "secret.txt"
    secret.write_text("root:*:0:0")
    (rep / "evil.png").symlink_to(secret)
    code, out = _run(*base, "--out", str(tmp_path / "s"))
    assert (code, out) == (1, f"Error: --report {rep}: evil.png is a symbolic link or not a file; explore copies only "
                              "the plots `envbench report` wrote: remove it, or pass a report folder\n")
    (rep / "evil.png").unlink()
    (rep / "evil.png").write_text("root:*:0:0")
    code, out = _run(*base, "--out", str(tmp_path / "s"))
    assert (code, out) == (1, f"Error: --report {rep}: evil.png is not a PNG image; explore copies only the plots "
                              "`envbench report` wrote: remove it, or pass a report folder\n")
    assert not (tmp_path / "s").exists()
    (rep / "evil.png").unlink()
    code, out = _run(*base, "--out", str(tmp_path / "s"))
    assert code == 0 and "1 report plot copied" in out
    assert (tmp_path / "s" / "plots" / "f1.png").read_bytes() == (rep / "f1.png").read_bytes()


def test_the_summary_f1_table_equals_evaluate(tmp_path: Path) -> None:
    """The summary's original-against-Env F1 (micro over the documents shown) is evaluate's F1 per seed; the
    list's F1 drop is each document's original F1 less its twins' mean; documents are numbered from 0."""
    from envbench.rename.generate import generate
    from envbench.scoring.evaluate import evaluate
    from tests.envbench.index_fixture import sample_world

    sw = sample_world()
    generate(sw.test, sw.index, tmp_path / "env", links=sw.links, seeds=2, progress=False, exclude_names_from=[sw.train])
    env = tmp_path / "env" / "test_env.json"
    orig_docs, env_docs = json.loads(sw.test.read_text()), json.loads(env.read_text())
    p0 = [{"title": d["title"], "h_idx": x["h"], "t_idx": x["t"], "r": x["r"]} for d in orig_docs
          for i, x in enumerate(d["labels"]) if i % 3]
    pk = [{"title": d["title"], "h_idx": x["h"], "t_idx": x["t"], "r": x["r"]} for d in env_docs
          for i, x in enumerate(d["labels"]) if i % 2]
    (tmp_path / "p0.json").write_text(json.dumps(p0))
    (tmp_path / "pk.json").write_text(json.dumps(pk))
    build_site(env, sw.test, tmp_path / "site", original_pred=tmp_path / "p0.json", env_pred=tmp_path / "pk.json")
    index = _data(tmp_path / "site", "data/index.js")
    f1 = index["summary"]["f1"]
    assert f1["rows"]["original"]["f1"] == round(evaluate(sw.test, tmp_path / "p0.json").scores["f1"], 4)
    per_seed = evaluate(env, tmp_path / "pk.json").scores["env"]["seeds"]
    assert [f1["rows"][f"seed {k}"]["f1"] for k in (1, 2)] == [round(per_seed[str(k)]["f1"], 4) for k in (1, 2)]
    assert f1["drop"] == round(f1["rows"]["original"]["f1"] - f1["env_mean_f1"], 4) and f1["drop"] > 0
    docs = index["documents"]
    assert [d["n"] for d in docs] == list(range(len(orig_docs)))
    assert all(d["f1_drop"] == round(d["f1_original"] - d["f1_twins"], 4) for d in docs if d["f1_drop"] is not None)
    assert index["summary"]["kept_reason_text"]["unlinked"] == "no Wikidata item (no link, or the linker abstained)"
