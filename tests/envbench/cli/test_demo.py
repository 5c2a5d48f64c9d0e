"""`envbench demo` (`make demo`): what a newcomer reads first. Its counts say what they count, each kept
reason says why in a few words, three renamed sentences stand beside their originals, and the last lines
are an `envbench explore` command that runs as printed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from envbench.cli.demo import sentence_pairs, sentence_text
from tests.envbench.cli.invoke import run

pytestmark = pytest.mark.slow

# The first pair of the sample world's benchmark, pinned as the pinned benchmark (sample_env.sha256) is.
FIRST_PAIR = """\
  [Lonely Dream]
    original: Lonely Dream is a 1975 Saryaric drama film written and directed by Hana Verhesberg.
    renamed:  The River of Lankel is a 2013 Kabramararian drama film written and directed by Lucia Venkaov.
"""


def test_demo_shows_renamed_sentences_labelled_counts_and_the_explore_command(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = run("demo", "--out", "runs/demo", "--no-progress")
    assert code == 0, out
    assert "documents: 20 source x 5 seeds = 100 renamed documents\n" in out
    assert "counts are entity slots: an entity counts once per seed (5 slots); renamed: given a new name\n" in out
    assert "type     renamed   slots    rate\n" in out and "total       1479    1610   0.919\n" in out
    assert ("kept their names (slots, why):\n"
            "  built_on          11  a name inside it, or around it, was kept\n"
            "  checked           40  a number the text checks (an age, a count)\n"
            "  overlap           30  a mention overlaps another entity's\n"
            "  unlinked          50  not linked to an item\n") in out
    assert "new names seen in train.json or dev.json: 0 of 1467 renamed mentions" in out
    assert "\n3 sentences and their first renamed copy (seed 1):\n" + FIRST_PAIR in out
    # each pair is a sentence of the source and the same sentence of its first copy, as written
    originals = json.loads(Path("runs/demo/sample/docs/test.json").read_text())
    copies = json.loads(Path("runs/demo/env/test_env.json").read_text())
    pairs = sentence_pairs(originals, copies)
    assert len(pairs) == 3 and all(before != after for _, before, after in pairs)
    for title, before, after in pairs:
        src = next(d for d in originals if d["title"] == title)
        twin = next(d for d in copies if d["title"] == f"{title}-1")
        k = next(i for i, s in enumerate(src["sents"]) if sentence_text(s) == before)
        assert sentence_text(twin["sents"][k]) == after
        assert f"  [{title}]\n    original: {before}\n    renamed:  {after}\n" in out
    # the printed explore command runs as printed, and writes the site the next line names
    lines = out.rstrip("\n").splitlines()
    assert lines[-3] == "every document beside its renamed copies, each substitution and kept reason:"
    command = shlex.split(lines[-2])
    assert command[:2] == ["envbench", "explore"]
    code, res = run(*command[1:], "--no-progress")
    assert code == 0, res
    assert lines[-1] == "  then open runs/demo/explore/index.html in a browser"
    assert Path("runs/demo/explore/index.html").is_file()


def test_sentence_text_reads_as_text() -> None:
    assert sentence_text(["Anna", ",", "born", "in", "Rome", "(", "Italy", ")", ",", "isn't", "here", "."]) == \
        "Anna, born in Rome (Italy), isn't here."
    assert sentence_text(["x"] * 100).endswith("...") and len(sentence_text(["x"] * 100)) == 150
