"""Notes and warnings that commands print and result files record: one code, one level, one text.

A result says more than its numbers: what a number means (the name-independent Ign F1), what was
skipped and why (no ``--train``, no ``--index``), and what looks wrong with the input (predictions
for titles the gold file lacks). Each such statement is a :class:`NoteCode` member that carries its
level and its text template, so the same statement is worded once wherever it is made, and code
decides by the code, never by reading the text back.

- ``Level.NOTE``: context for reading the result; the CLI prints it as ``Note: ...`` on stdout.
- ``Level.WARNING``: the input is probably not what the user meant; ``Warning: ...`` on stderr.

    >>> n = note(NoteCode.DUPLICATES, n=2)
    >>> n.code is NoteCode.DUPLICATES, n.level is Level.NOTE, n.text
    (True, True, '2 duplicated predictions counted once')

Result files (``scores.json``, ``report.json``) keep ``notes`` and ``warnings`` as lists of texts.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum


class Level(str, Enum):
    NOTE = "note"
    WARNING = "warning"

    def __str__(self) -> str:
        return self.value


class NoteCode(str, Enum):
    """Every note: ``(code, level, template)``; the template's ``{fields}`` are given to :func:`note`."""

    level: Level
    template: str

    def __new__(cls, value: str, level: Level, template: str) -> NoteCode:
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.level = level
        obj.template = template
        return obj

    def __str__(self) -> str:
        return self.value

    @property
    def fields(self) -> tuple[str, ...]:
        """The names the template needs, in order of first use."""
        names = [f for _, f, _, _ in string.Formatter().parse(self.template) if f]
        return tuple(dict.fromkeys(names))

    # ---------------------------------------------------------------- scores of one file
    NO_TRAIN = (
        "no_train", Level.NOTE,
        "Ign F1 equals F1: no training documents were given (--train), so no correct fact can be "
        "discounted as seen in training",
    )
    TRAIN_IS_GOLD = (
        "train_is_gold", Level.WARNING,
        "--train {train} is the same file as {gold_option} {gold}: every correct prediction then counts as seen "
        "in training, so Ign F1 is 0 by construction and means nothing; pass the documents the model was "
        "trained on (e.g. train_annotated.json) as --train",
    )
    DUPLICATES = ("duplicates", Level.NOTE, "{n} duplicated predictions counted once")
    UNKNOWN_TITLES = (
        "unknown_titles", Level.WARNING,
        "{n} predictions name {k} titles that are not in {gold} (e.g. {examples}); they count against precision, "
        "as in the official scorer; check that {pred_option} was made for this {gold_option}",
    )
    ENV_PREDS_WITHOUT_SEED = (
        "env_preds_without_seed", Level.WARNING,
        "{n} of them name a title with no seed of {gold} (seeds {seeds}; e.g. {examples}): they count against the "
        "pooled precision ('all') but against no seed's, so the mean over seeds leaves them out",
    )
    NO_GOLD_FACTS = (
        "no_gold_facts", Level.WARNING,
        "{gold} has no gold facts (no labels), so every score is 0; is it an unlabelled split such as DocRED's "
        "test set? Score on a labelled file (e.g. dev) instead",
    )
    # ---------------------------------------------------------------- which gold documents are scored
    GOLD_WITHOUT_PREDICTIONS = (
        "gold_without_predictions", Level.WARNING,
        "gold documents without any prediction in {pred}: {n} of {total} (e.g. {examples}); each is "
        "scored with all its gold facts missed, which lowers recall; if the predictions are for a subset, pass "
        "--only-predicted to score only the predicted documents",
    )
    REPORT_ORIGINALS_NOT_RENAMED = (
        "report_originals_not_renamed", Level.WARNING,
        "{gold}: {n} of its {total} documents have no renamed copy in {env} (e.g. {examples}); the original "
        "side is scored on the {kept} documents that {env} covers, so that both sides score the same documents",
    )
    REPORT_GOLD_WITHOUT_PREDICTIONS = (
        "report_gold_without_predictions", Level.WARNING,
        "gold documents without any prediction in {pred}: {n} of {total} (e.g. {examples}); each is scored "
        "with all its gold facts missed; if {pred} is for a subset, predict every document of {gold} (or "
        "score the subset with `envbench evaluate --only-predicted`)",
    )
    ONLY_PREDICTED_COVERS = (
        "only_predicted_covers", Level.NOTE,
        "--only-predicted: scored {scored} of {total} gold documents, those {manifest} says the predictions cover "
        "({empty} of them without predictions, their gold facts counted as missed) and those with a prediction",
    )
    ONLY_PREDICTED_NO_COVERS = (
        "only_predicted_no_covers", Level.NOTE,
        "--only-predicted: scored {scored} of {total} gold documents, those with at least one prediction; no "
        "manifest from `envbench icl parse` beside {pred} says which documents were asked, so a document "
        "answered with nothing is left out too (recall reads high by as much)",
    )
    COVERS_STALE = (
        "covers_stale", Level.WARNING,
        "{manifest} does not describe {pred} (the file's sha256 differs from the one it records), so the "
        "documents it lists as covered are not used; rerun `envbench icl parse` to write both again",
    )
    ENV_SUBSET_UNEVEN = (
        "env_subset_uneven", Level.NOTE,
        "scored as a plain benchmark: the documents scored (--only-predicted) do not have every source document "
        "once for each of the same seeds, so per-seed scores would compare different documents",
    )
    # ---------------------------------------------------------------- Env benchmarks
    ENV_NOT_DETECTED = (
        "env_not_detected", Level.NOTE,
        "scored as a plain benchmark: the titles of {gold} end in a suffix -k (e.g. {example}), but an Env file "
        "has every source document once for each seed 1..K; pass --env to score it per seed anyway",
    )
    SUBSTITUTIONS_UNUSED = (
        "substitutions_unused", Level.WARNING,
        "--substitutions {path} is not used: {gold} is not an Env benchmark (its titles lack the seed suffix -k); "
        "pass an Env gold file from `envbench generate`",
    )
    NAME_INDEPENDENT = (
        "name_independent", Level.NOTE,
        "name-independent Ign F1 maps renamed mentions back to their original names (through {path}) before "
        "testing for overlap with training facts, so it is comparable with the original benchmark's Ign F1",
    )
    NAME_INDEPENDENT_NEEDS_TRAIN = (
        "name_independent_needs_train", Level.NOTE,
        "no name-independent Ign F1: it needs training documents (--train)",
    )
    NAME_INDEPENDENT_NEEDS_SUBSTITUTIONS = (
        "name_independent_needs_substitutions", Level.NOTE,
        "no name-independent Ign F1: no substitutions.parquet beside {gold}; pass --substitutions FILE from "
        "`envbench generate`",
    )
    SUBSTITUTIONS_PARTIAL = (
        "substitutions_partial", Level.WARNING,
        "{path} covers {covered} of {total} gold documents; the others keep their names for the "
        "name-independent Ign F1",
    )
    SUBSTITUTIONS_UNMAPPED = (
        "substitutions_unmapped", Level.WARNING,
        "{n} mentions of renamed entities carry none of the entity's new names in {path}; they keep their names "
        "(is it the file for this gold?)",
    )
    # ---------------------------------------------------------------- the report's analyses
    TWINS_WITHOUT_ORIGINAL = (
        "twins_without_original", Level.WARNING,
        "{n} Env documents have no original document in {original_gold}; they are left out of the consistency "
        "rate",
    )
    TABLE1_FROM_SUBSTITUTIONS = (
        "table1_from_substitutions", Level.NOTE,
        "no stats.json at {path}: Table 1 computed from substitutions.parquet",
    )
    TABLE1_SKIPPED = (
        "table1_skipped", Level.NOTE,
        "Table 1 skipped: no stats.json at {path}; pass --stats FILE from `envbench generate`",
    )
    TABLE4_NEEDS_INDEX = (
        "table4_needs_index", Level.NOTE,
        "Table 4 (popularity) skipped: pass --index DIR (from `envbench ingest-dump`)",
    )
    ROBUSTNESS_NO_PREDICTIONS = (
        "robustness_no_predictions", Level.WARNING,
        "no {path}: system {system} is left out of the row of --env {env}; put its predictions on that "
        "folder's Env file there",
    )
    ROBUSTNESS_UNKNOWN_TITLES = (
        "robustness_unknown_titles", Level.WARNING,
        "{path}: predictions for {n} titles of no compared document (e.g. {examples}) are left out of every score",
    )
    ROBUSTNESS_NEGATIVE_CONTROL = (
        "robustness_negative_control", Level.NOTE,
        "type-swap is a negative control: it gives entities names of another coarse type, which breaks what "
        "the labels assume of their arguments; its fall bounds what names alone can cost, and is no robustness "
        "figure",
    )
    ROBUSTNESS_INTERVALS = (
        "robustness_intervals", Level.NOTE,
        "intervals: paired percentile bootstrap over the {n} source documents ({replicates} resamples), each "
        "document drawn on both sides with all its Env copies; Ign F1 on an Env file discounts the facts of the "
        "original names (mapped back through its substitutions.parquet)",
    )
    TABLE4_NO_POPULARITY = (
        "table4_no_popularity", Level.NOTE,
        "Table 4 (popularity) skipped: the index {index} has no popularity (its dump holds no item-valued "
        "statements to count); ingest a dump with statements",
    )
    TABLE4_NEEDS_SUBSTITUTIONS = (
        "table4_needs_substitutions", Level.NOTE,
        "Table 4 (popularity) skipped: no substitutions.parquet at {path}; pass --substitutions FILE from "
        "`envbench generate`",
    )
    TABLE5_NEEDS_TRAIN = (
        "table5_needs_train", Level.NOTE,
        "Table 5 (names seen in training) skipped: pass --train FILE",
    )
    RENAMED_NAMES_MORE_FAMILIAR = (
        "renamed_names_more_familiar", Level.WARNING,
        "{env_share} of the renamed PER/ORG/LOC/MISC mentions of {env} carry a name of the --train documents, "
        "more than the {orig_share} of the original mentions: renaming made the names more familiar to the "
        "model, the opposite of what the benchmark measures; regenerate it with `envbench generate ... "
        "--exclude-names-from` those training files{how}",
    )


@dataclass(frozen=True)
class Note:
    """One statement about a result: ``code`` for programs, ``text`` for people."""

    code: NoteCode
    text: str

    @property
    def level(self) -> Level:
        return self.code.level

    def __str__(self) -> str:
        return self.text


def note(code: NoteCode, **fields: object) -> Note:
    """The note ``code`` with its template filled in; a missing or an extra field is a bug, so it raises."""
    extra = set(fields) - set(code.fields)
    if extra:
        raise TypeError(f"note {code.value}: unexpected fields {sorted(extra)}")
    return Note(code, code.template.format(**fields))


def texts(notes: Iterable[Note], level: Level) -> list[str]:
    """The texts of the notes of one level, in order (what result files and the CLI print)."""
    return [n.text for n in notes if n.level is level]


class HasNotes:
    """For result classes with a ``messages: list[Note]`` field: their warning and note texts."""

    messages: list[Note]

    @property
    def warnings(self) -> list[str]:
        return texts(self.messages, Level.WARNING)

    @property
    def notes(self) -> list[str]:
        return texts(self.messages, Level.NOTE)


__all__ = ["HasNotes", "Level", "Note", "NoteCode", "note", "texts"]
