"""bench/RESULTS.md stays by subject, not a diary (issue 62).

Each subject (`##`, and each `###` part of one) opens with a **Current** block that carries a date
(YYYY-MM-DD), a commit and a command in backticks; no heading carries a date; no paragraph outside a
Current block opens as a dated entry ("**Staging markers** (2026-12-06, ...)"), and none says "this
commit" or a time of day instead of naming the commit. A "Tried and not adopted" list holds one line per
idea, each with its figure. Each `##` subject names where its earlier figures are ("Earlier figures:" and a
commit range, or "none"), and every commit such a pointer names is in git, not-landed or not. Every committed
run under bench/results/ stays linked.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "RESULTS.md"

TRIED = "**Tried and not adopted**"
_HEADING = re.compile(r"^(#{1,6}) (.*)$")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
# a short hash: 7-40 hex digits with at least one digit and one letter (not a year, not "decade")
_COMMIT = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_COMMAND = re.compile(r"`(?:python|make|envbench|git|\.venv/bin/|\.ci/run|bench/)[^`]*`")
_RANGE = re.compile(r"\b[0-9a-f]{7,40}\.\.[0-9a-f]{7,40}\b")
_DATED_ENTRY = re.compile(r"^\*\*[^*]+\*\* \([^)]*?\d{4}-\d{2}-\d{2}")
_DIARY_WORDS = re.compile(r"\b(this commit|this tree|this session|morning|evening|night)\b", re.IGNORECASE)


def _paragraphs(lines: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            out[-1].append(line)
        elif out[-1]:
            out.append([])
    return [p for p in out if p]


def shape_problems(text: str) -> list[str]:
    """What keeps a RESULTS page from the shape above, one line each (empty when it has it)."""
    lines = text.splitlines()
    fenced, inside = set(), False  # a "# comment" in a fenced block is no heading
    for i, line in enumerate(lines):
        if line.startswith("```"):
            inside = not inside
        elif inside:
            fenced.add(i)
    heads = [(i, len(m.group(1)), m.group(2).strip()) for i, line in enumerate(lines)
             if i not in fenced and (m := _HEADING.match(line))]
    problems = [f"heading carries a date: {title}" for _, _, title in heads if _DATE.search(title)]
    subjects = [(i, level, title) for i, level, title in heads if level in (2, 3)]
    for k, (i, level, title) in enumerate(subjects):
        end = subjects[k + 1][0] if k + 1 < len(subjects) else len(lines)
        paras = _paragraphs(lines[i + 1:end])
        first = " ".join(paras[0]) if paras else ""
        if not first.startswith("**Current**"):
            problems.append(f"{title}: does not open with a **Current** block")
        else:
            missing = [what for what, rx in (("a date", _DATE), ("a commit", _COMMIT), ("a command", _COMMAND))
                       if not rx.search(first)]
            if missing:
                problems.append(f"{title}: its Current block lacks {', '.join(missing)}")
        for para in paras[1:]:
            if _DATED_ENTRY.match(para[0]):
                problems.append(f"{title}: a dated entry outside the Current block: {para[0][:60]}")
        if level == 2:
            whole_end = next((j for j, lv, _ in subjects[k + 1:] if lv == 2), len(lines))
            earlier = [" ".join(p) for p in _paragraphs(lines[i + 1:whole_end])
                       if p[0].startswith("Earlier figures:")]
            if not any(_RANGE.search(p) or p.startswith("Earlier figures: none") for p in earlier):
                problems.append(f"{title}: names no 'Earlier figures:' commit range")
    start = subjects[0][0] if subjects else len(lines)  # the page's own introduction may name the rules
    for n in range(start, len(lines)):
        line = lines[n]
        if (m := _DIARY_WORDS.search(line)) and not _HEADING.match(line):
            problems.append(f"line {n + 1}: says '{m.group(1)}': name the commit and the date")
        if line.strip().rstrip(":") != TRIED:
            continue
        items = []
        for item in lines[n + 1:]:
            if not item.strip():
                break
            items.append(item)
        if not items:
            problems.append(f"line {n + 1}: an empty 'Tried and not adopted' list")
        for k, item in enumerate(items, start=n + 2):
            if not item.startswith("- "):
                problems.append(f"line {k}: 'Tried and not adopted' holds one line per idea: {item.strip()[:40]}")
            elif not re.search(r"\d", item):
                problems.append(f"line {k}: 'Tried and not adopted' without its figure: {item[2:42]}")
    return problems


def test_results_keeps_its_shape() -> None:
    problems = shape_problems(RESULTS.read_text(encoding="utf-8"))
    assert not problems, "bench/RESULTS.md:\n" + "\n".join(problems)


def test_the_shape_check_fails_on_a_diary() -> None:
    diary = (
        "# Measured results\n\n"
        "## Renaming on real data and the lock\n\n"
        "### Read on 2026-12-04, night: whole-phrase kind words\n\n"
        "Commits f7522d6..9df23cf; lock rate 0.8504.\n\n"
        "**Staging markers, side by side** (2026-12-06, 5c4f0f2): 2.58x.\n\n"
        "**Tried and not adopted**\n"
        "- A head-noun veto over typed clusters: agreement 69.6% -> 69.0%\n"
        "  over 124 retyped clusters.\n"
        "- The original first name over the context gender.\n\n"
        "## Ingest\n\n"
        "**Current** (this commit; the ingest is 2.7x qwikidata).\n"
    )
    read_on = "Read on 2026-12-04, night: whole-phrase kind words"
    assert shape_problems(diary) == [
        f"heading carries a date: {read_on}",
        "Renaming on real data and the lock: does not open with a **Current** block",
        "Renaming on real data and the lock: names no 'Earlier figures:' commit range",
        f"{read_on}: does not open with a **Current** block",
        f"{read_on}: a dated entry outside the Current block: **Staging markers, side by side** (2026-12-06, 5c4f0f2): 2.5",
        "Ingest: its Current block lacks a date, a commit, a command",
        "Ingest: names no 'Earlier figures:' commit range",
        "line 13: 'Tried and not adopted' holds one line per idea: over 124 retyped clusters.",
        "line 14: 'Tried and not adopted' without its figure: The original first name over the context",
        "line 18: says 'this commit': name the commit and the date",
    ]


def test_a_subject_in_shape_passes() -> None:
    good = (
        "# Measured results\n\n"
        "## Ingest\n\n"
        "**Current** (2026-12-06, 84cd66a; `python bench/ingest.py --quick`): 2.68x qwikidata.\n\n"
        "```\n# a comment in a fenced block, 2026-12-06, is no heading\n```\n\n"
        "**Tried and not adopted**\n"
        "- zstd level 1 for the final tables: within noise at 150,000 entities.\n\n"
        "Earlier figures: `git log -p bench/RESULTS.md`, commits 558c648..7372db7.\n"
    )
    assert shape_problems(good) == []


def test_every_committed_run_stays_linked() -> None:
    text = RESULTS.read_text(encoding="utf-8")
    unlinked = [p.name for p in sorted((REPO / "bench" / "results").glob("*.json"))
                if f"(results/{p.name})" not in text]
    assert not unlinked, f"bench/RESULTS.md links none of: {', '.join(unlinked)}"


# The header's list of commits that never reached git (their work landed later as one commit).
# A file digest cut short ("code sha256 d17431d2...") is no commit; a range ("558c648..7372db7") has two dots.
_DIGEST = re.compile(r"\b[0-9a-f]{7,64}(?:\.\.\.|…)")
_UNLANDED = re.compile(r"^\*\*Commits that did not land\.\*\*(.*?)(?:\n\n|\Z)", re.MULTILINE | re.DOTALL)


def unknown_commits(text: str, in_git: Callable[[list[str]], set[str]]) -> list[str]:
    """Commits the page names that are neither in git (``in_git`` of the names) nor in its list of commits that
    did not land: a figure whose code nobody can check out. In order of first mention."""
    listed = set(_COMMIT.findall(m.group(1))) if (m := _UNLANDED.search(text)) else set()
    text = _DIGEST.sub("", text)
    named = list(dict.fromkeys(_COMMIT.findall(text)))
    found = in_git([h for h in named if h not in listed])
    return [h for h in named if h not in listed and h not in found]


def _git_commits(names: list[str]) -> set[str]:
    """The names among ``names`` that are commits of this checkout."""
    query = "".join(f"{h}^{{commit}}\n" for h in names)
    out = subprocess.run(["git", "-C", str(REPO), "cat-file", "--batch-check"], input=query,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    return {h for h, line in zip(names, out, strict=True) if line.split()[1:2] == ["commit"]}


def test_every_named_commit_can_be_checked_out() -> None:
    _skip_unless_full_history()
    unknown = unknown_commits(RESULTS.read_text(encoding="utf-8"), _git_commits)
    assert not unknown, ("bench/RESULTS.md names commits git lacks (name a commit of `git log`, or list it under "
                         f"'Commits that did not land'): {' '.join(unknown)}")


def test_the_commit_check_fails_on_a_commit_git_lacks() -> None:
    text = ("**Commits that did not land.** They are: 0cf2634.\n\n"
            "## Ingest\n\n**Current** (2026-12-07, 0cf2634, 7372db7 and ab12cd3; `make lock`).\n")
    assert unknown_commits(text, lambda names: {h for h in names if h == "7372db7"}) == ["ab12cd3"]


# Where earlier figures are: an "Earlier figures:" paragraph, or a `git ...` command in backticks anywhere.
_EARLIER = re.compile(r"^Earlier figures:.*?(?:\n\n|\Z)", re.MULTILINE | re.DOTALL)
_GIT_SPAN = re.compile(r"`git [^`]*`")


def history_pointer_commits(text: str) -> list[str]:
    """The commits named where the page points into `git log` for earlier figures, in order of first mention."""
    spans = [m.group(0) for m in _EARLIER.finditer(text)] + _GIT_SPAN.findall(text)
    return list(dict.fromkeys(h for span in spans for h in _COMMIT.findall(span)))


def unreachable_history(text: str, in_git: Callable[[list[str]], set[str]]) -> list[str]:
    """Commits an "Earlier figures" pointer names that are not in git (``in_git`` of the names). No exemption
    for the list of commits that did not land: a range ending at one of them makes `git log` fail."""
    named = history_pointer_commits(text)
    found = in_git(named)
    return [h for h in named if h not in found]


def _skip_unless_full_history() -> str:
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the named commits cannot be looked up")
    shallow = subprocess.run([git, "-C", str(REPO), "rev-parse", "--is-shallow-repository"],
                             capture_output=True, text=True).stdout.strip()
    if shallow != "false":
        pytest.skip("a shallow clone holds too little history to look the named commits up")
    return git


def test_every_earlier_figures_range_is_in_git() -> None:
    _skip_unless_full_history()
    text = RESULTS.read_text(encoding="utf-8")
    assert history_pointer_commits(text), "bench/RESULTS.md names no commit where its earlier figures are"
    missing = unreachable_history(text, _git_commits)
    assert not missing, ("bench/RESULTS.md points `git log` at commits git lacks (end the range at a commit of "
                         f"`git log -- bench/RESULTS.md`): {' '.join(missing)}")


def test_the_range_check_fails_on_a_made_up_commit() -> None:
    text = ("**Commits that did not land.** They are: c04ee4c.\n\n"
            "## Generate\n\n**Current** (2026-12-07, 7372db7; `make lock`).\n\n"
            "Earlier figures: `git log -p bench/RESULTS.md`, commits 558c648..c04ee4c (and the diary\n"
            "before 558c648).\n\n"
            "## Ingest\n\nThe whole file: `git show ab12cd3:bench/RESULTS.md`; 0cf2634 is no pointer.\n\n"
            "Earlier figures: `git log -p bench/RESULTS.md`, commits 558c648..acf8489.\n")
    assert history_pointer_commits(text) == ["558c648", "c04ee4c", "acf8489", "ab12cd3"]
    real = {"558c648", "acf8489", "7372db7", "0cf2634"}
    assert unreachable_history(text, lambda names: {h for h in names if h in real}) == ["c04ee4c", "ab12cd3"]
