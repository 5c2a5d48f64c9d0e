"""envbench.core.notes: one code, one level and one text per note."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envbench.core.notes import Level, Note, NoteCode, note, texts

REPO = Path(__file__).resolve().parents[3]


def test_every_code_formats_with_exactly_its_fields() -> None:
    for code in NoteCode:
        n = note(code, **{f: f"<{f}>" for f in code.fields})
        assert n.code is code and n.level is code.level and str(n) == n.text
        assert "{" not in n.text  # every placeholder was filled
        with pytest.raises(TypeError, match=f"note {code.value}: unexpected fields"):
            note(code, **{f: 1 for f in code.fields}, bogus=1)
        if code.fields:
            with pytest.raises(KeyError):
                note(code)


def test_codes_and_texts_are_unique() -> None:
    assert len({c.value for c in NoteCode}) == len(NoteCode)
    assert len({c.template for c in NoteCode}) == len(NoteCode)
    assert NoteCode("no_train") is NoteCode.NO_TRAIN and f"{NoteCode.NO_TRAIN}" == "no_train"


def test_texts_split_by_level_in_order() -> None:
    ns = [note(NoteCode.DUPLICATES, n=1), note(NoteCode.NO_GOLD_FACTS, gold="g.json"), note(NoteCode.NO_TRAIN)]
    assert texts(ns, Level.NOTE) == ["1 duplicated predictions counted once", NoteCode.NO_TRAIN.template]
    assert texts(ns, Level.WARNING) == [ns[1].text]
    assert ns[0] == Note(NoteCode.DUPLICATES, "1 duplicated predictions counted once")


def test_scoring_never_tests_message_text() -> None:
    """Code decides by NoteCode: no scoring module looks inside a note's text (as `"..." in n` once did)."""
    bad = []
    for path in sorted((REPO / "envbench" / "scoring").rglob("*.py")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"""["'][^"']*["']\s+(not\s+)?in\s+(n|note|w|warning|msg|text)\b""", line) or \
                    re.search(r"\.text\s*(==|!=|\.startswith|\.endswith)|\bin\s+\w+\.text\b", line):
                bad.append(f"{path.relative_to(REPO)}:{i}: {line.strip()}")
    assert not bad, "control flow on note text:\n" + "\n".join(bad)


def test_every_kept_reason_has_a_few_words() -> None:
    from envbench.core.reasons import KeptReason

    assert all(0 < len(r.short.split()) <= 9 for r in KeptReason)
