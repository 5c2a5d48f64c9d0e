"""The step lifecycle: check, lock, skip when up to date, stage, publish, manifest last."""

from __future__ import annotations

import json
import os
import signal
import stat
from pathlib import Path

import pytest

from etl.io import InputError
from etl.step import (
    STAGING_MARKER,
    Step,
    manifest_beside,
    mark_staging,
    read_manifest,
    remove_staging,
    resolves_inside,
)


def _write(step: Step, name: str, text: str) -> None:
    step.path(name).write_text(text)


def _run(out: Path, inp: Path, *, text: str = "a", params: dict | None = None, force: bool = False,
         outputs: tuple[str, ...] = ("a.txt", "b.txt"), own_folder: bool = False) -> Step:
    with Step("demo", root=out, outputs=list(outputs), inputs=[inp], parameters=params or {"k": 1},
              force=force, own_folder=own_folder) as step:
        if not step.up_to_date:
            for name in outputs:
                _write(step, name, f"{text}-{name}")
    return step


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def inp(tmp_path: Path) -> Path:
    p = tmp_path / "input.json"
    p.write_text("[1]")
    return p


def test_publishes_then_skips_when_up_to_date(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "out"
    first = _run(out, inp)
    assert not first.up_to_date
    assert _names(out) == ["a.txt", "b.txt", "manifest.json"]
    man = read_manifest(out / "manifest.json")
    assert man is not None and [o["name"] for o in man["outputs"]] == ["a.txt", "b.txt"]
    assert man["inputs"][0]["name"] == "input.json" and man["parameters"] == {"k": 1}
    assert _run(out, inp, text="b").up_to_date
    assert (out / "a.txt").read_text() == "a-a.txt"  # nothing rewritten


def test_reruns_when_anything_compared_changes(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "out"
    _run(out, inp)
    assert not _run(out, inp, params={"k": 2}).up_to_date
    assert not _run(out, inp, params={"k": 2}, force=True).up_to_date
    (out / "a.txt").write_text("edited")
    assert not _run(out, inp, params={"k": 2}).up_to_date
    inp.write_text("[2]")
    assert not _run(out, inp, params={"k": 2}).up_to_date
    (out / "b.txt").unlink()
    assert not _run(out, inp, params={"k": 2}).up_to_date
    assert not _run(out, inp, params={"k": 2}, outputs=("a.txt",)).up_to_date  # another output set


def test_outputs_of_the_old_manifest_that_are_not_rewritten_are_removed(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "out"
    _run(out, inp)
    (out / "mine.txt").write_text("a file of the user's")
    _run(out, inp, outputs=("a.txt",))
    assert _names(out) == ["a.txt", "manifest.json", "mine.txt"]


def test_a_failing_body_leaves_the_old_outputs_and_no_staging(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "out"
    _run(out, inp)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(ZeroDivisionError):
        with Step("demo", root=out, outputs=["a.txt"], inputs=[inp], parameters={"k": 9}) as step:
            _write(step, "a.txt", "half")
            1 / 0  # noqa: B018
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_failing_body_removes_the_folder_it_created(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "new" / "out"
    with pytest.raises(KeyError):
        with Step("demo", root=out, outputs=["a.txt"], inputs=[inp]) as step:
            _write(step, "a.txt", "x")
            raise KeyError("boom")
    assert not out.exists()


def test_a_crash_while_publishing_is_never_up_to_date(tmp_path: Path, inp: Path, monkeypatch) -> None:
    out = tmp_path / "out"
    _run(out, inp)
    real = os.replace
    calls = []

    def failing(src, dst):  # the second output's rename fails
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("disk gone")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError):
        _run(out, inp, text="new", params={"k": 5})
    monkeypatch.setattr(os, "replace", real)
    assert not (out / "manifest.json").exists()
    assert not _run(out, inp, text="new", params={"k": 5}).up_to_date
    assert (out / "b.txt").read_text() == "new-b.txt"


def test_an_input_that_is_an_output_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    links = out / "b.txt"
    links.write_text("{}")
    with pytest.raises(InputError) as err:
        _run(out, links)
    assert str(err.value) == (f"--out {out}: the input {links} would be overwritten by this step's output "
                              f"{out / 'b.txt'}; choose another output location or move the input")
    assert links.read_text() == "{}"
    other = out / "manifest.json"
    other.write_text("{}")
    with pytest.raises(InputError, match="would be overwritten"):
        _run(out, other, outputs=("a.txt",))


def test_an_input_listed_by_the_old_manifest_is_refused(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    _run(out, inp)  # lists a.txt and b.txt
    with pytest.raises(InputError, match="would be overwritten"):
        _run(out, out / "b.txt", outputs=("a.txt",))  # publishing would remove b.txt
    assert (out / "b.txt").exists()


def test_one_writer_at_a_time(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    with Step("demo", root=out, outputs=["a.txt"], inputs=[inp]) as step:
        _write(step, "a.txt", "x")
        with pytest.raises(InputError) as err:
            with Step("demo", root=out, outputs=["a.txt"], inputs=[inp]):
                pass
        assert str(err.value) == (f"--out {out}: another run is writing there now; wait for it to end, or choose "
                                  "another output location")
    assert _run(out, inp).up_to_date is False  # the lock is gone once the first step ends


def _killed_staging(folder: Path, name: str, owner: str) -> Path:
    """What a SIGKILL during staging leaves: the folder, its marker, a half-written output."""
    stale = folder / name
    stale.mkdir()
    mark_staging(stale, owner)
    (stale / "a.txt").write_text("half")
    return stale


def test_stale_staging_of_a_killed_run_is_removed(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    _killed_staging(out, ".staging-demo-abc123", "demo")
    _killed_staging(out, ".staging-other-1", "other")  # another step's: not ours to remove
    _run(out, inp)
    assert _names(out) == [".staging-other-1", "a.txt", "b.txt", "manifest.json"]


def test_a_users_folder_named_like_staging_is_kept(tmp_path: Path, inp: Path) -> None:
    # `evaluate --out ~/s.json` removed every ~/.staging-evaluate-*: a name alone never makes a folder ours
    out = tmp_path / "o"
    for name in (".staging-demo-mine", ".staging-demo-abc123"):
        (out / name).mkdir(parents=True)
        (out / name / "keep.txt").write_text("precious")
    (out / ".staging-demo-forged").mkdir()  # a marker of another owner, or a damaged one, is no marker
    (out / ".staging-demo-forged" / STAGING_MARKER).write_text("envbench staging folder of other")
    (out / ".staging-demo-empty").mkdir()  # empty, but not in the step's form: the user's too
    (out / ".staging-demo-0badc0de").mkdir()  # empty, in the step's exact form, but unmarked: the user's too
    with Step("demo", manifest=out / "s.json.manifest.json", outputs=[out / "s.json"], inputs=[inp]) as step:
        step.path(out / "s.json").write_text("{}")
    assert _names(out) == [".staging-demo-0badc0de", ".staging-demo-abc123", ".staging-demo-empty",
                           ".staging-demo-forged", ".staging-demo-mine", "s.json", "s.json.manifest.json"]
    assert (out / ".staging-demo-mine" / "keep.txt").read_text() == "precious"
    assert (out / ".staging-demo-abc123" / "keep.txt").read_text() == "precious"


def test_an_unmarked_folder_is_never_removed_even_empty_and_in_the_exact_form(tmp_path: Path, inp: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A step deletes no folder it did not write: an empty `.staging-demo-0badc0de` without the marker had been
    rmdir-ed for its name alone, by remove_staging and by a step's start."""
    out = tmp_path / "o"
    theirs = out / ".staging-demo-0badc0de"
    theirs.mkdir(parents=True)
    assert remove_staging(theirs, "demo") is False and theirs.is_dir()
    assert _run(out, inp).up_to_date is False and theirs.is_dir()
    # a folder the run itself made is removed when marking it fails (a full disk, Ctrl-C): it knows it made it
    def interrupted(folder: Path, owner: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("etl.step.mark_staging", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _run(out, inp, force=True)
    assert _names(out) == [".staging-demo-0badc0de", "a.txt", "b.txt", "manifest.json"]


def test_a_claim_left_after_the_manifest_is_removed_by_an_up_to_date_rerun(tmp_path: Path, inp: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # a kill between writing the manifest and removing the claim left .manifest.json.publishing for good
    out = tmp_path / "o"
    real = Path.unlink

    def killed(self: Path, *args, **kwargs) -> None:
        if self.name == ".manifest.json.publishing":
            raise KeyboardInterrupt  # the claim stays, as a SIGKILL there leaves it
        real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", killed)
    with pytest.raises(KeyboardInterrupt):
        _run(out, inp)
    monkeypatch.undo()
    assert _names(out) == [".manifest.json.publishing", "a.txt", "b.txt", "manifest.json"]
    assert _run(out, inp).up_to_date
    assert _names(out) == ["a.txt", "b.txt", "manifest.json"]


def test_a_claim_that_is_not_this_steps_is_kept(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    _run(out, inp)
    for text in ('{"step": "other", "outputs": []}', "not json"):
        (out / ".manifest.json.publishing").write_text(text)
        assert _run(out, inp).up_to_date
        assert (out / ".manifest.json.publishing").read_text() == text


def test_a_manifest_that_is_not_an_object_is_refused_and_replaced_only_with_force(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    for text in ("[1, 2]", "{not json", "precious\n"):
        # no run of ours leaves such a manifest (it is written atomically, last): somebody's file
        (out / "manifest.json").write_text(text)
        with pytest.raises(InputError) as err:
            _run(out, inp)
        assert str(err.value) == (f"--out {out}: manifest.json there is not a manifest an envbench step wrote "
                                  "(not a JSON object); move it, or choose another --out, or pass --force to replace it")
        assert (out / "manifest.json").read_text() == text and _names(out) == ["manifest.json"]
    assert not _run(out, inp, params={"k": 3}, force=True).up_to_date
    assert read_manifest(out / "manifest.json")["parameters"] == {"k": 3}


def test_folder_outputs_swap_whole(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    for parts in (["p0", "p1"], ["p0"]):
        with Step("demo", root=out, outputs=["table/"], inputs=[inp], parameters={"parts": parts}) as step:
            folder = step.path("table")
            folder.mkdir()
            for p in parts:
                (folder / f"{p}.parquet").write_text(p)
        assert _names(out / "table") == [f"{p}.parquet" for p in parts]
        names = [o["name"] for o in read_manifest(out / "manifest.json")["outputs"]]
        assert names == [f"table/{p}.parquet" for p in parts]


def test_file_outputs_with_a_manifest_beside(tmp_path: Path, inp: Path) -> None:
    links = tmp_path / "a" / "links.json"
    kb = tmp_path / "b" / "kb.json"
    for expect_up_to_date in (False, True):
        with Step("kb", manifest=manifest_beside(kb), outputs=[kb, links], inputs=[inp]) as step:
            assert step.up_to_date is expect_up_to_date
            if not step.up_to_date:
                step.path(kb).write_text("kb")
                step.path(links).write_text("links")
    man = json.loads(manifest_beside(kb).read_text())
    assert sorted(o["name"] for o in man["outputs"]) == ["../a/links.json", "kb.json"]
    assert _names(tmp_path / "a") == ["links.json"] and _names(tmp_path / "b") == ["kb.json", "kb.json.manifest.json"]


def test_unwritable_and_misnamed_outputs_fail_before_any_work(tmp_path: Path, inp: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError) as err:
        with Step("demo", root=blocker, outputs=["a.txt"], inputs=[inp]):
            raise AssertionError("the body must not run")
    assert str(err.value) == f"--out {blocker}: a file has that name; choose a folder path"
    (tmp_path / "o" / "a.txt").mkdir(parents=True)
    with pytest.raises(InputError, match="a folder has that name; choose a file path"):
        with Step("demo", root=tmp_path / "o", outputs=["a.txt"], inputs=[inp]):
            raise AssertionError("the body must not run")


def test_undeclared_outputs_and_missing_outputs_are_bugs(tmp_path: Path, inp: Path) -> None:
    with pytest.raises(ValueError, match="not a declared output"):
        with Step("demo", root=tmp_path / "o", outputs=["a.txt"], inputs=[inp]) as step:
            step.path("c.txt")
    with pytest.raises(RuntimeError, match="did not write"):
        with Step("demo", root=tmp_path / "o", outputs=["a.txt"], inputs=[inp]):
            pass
    assert not (tmp_path / "o" / "manifest.json").exists()


def test_a_hostile_manifest_never_deletes_other_files(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    from etl.io import sha256_file

    (out / "manifest.json").write_text(json.dumps({"outputs": [{"name": "../victim.txt", "sha256": "0" * 64},
                                                               {"name": "../victim.txt"},
                                                               {"name": "../victim.txt", "sha256": sha256_file(victim)}]}))
    with pytest.raises(InputError) as err:  # an object naming no step is not ours: refused
        _run(out, inp)
    assert str(err.value) == (f"--out {out}: manifest.json there is not a manifest an envbench step wrote (it names "
                              "no step); move it, or choose another --out, or pass --force to replace it")
    _run(out, inp, force=True)  # replaced when forced, and still nothing it names is removed
    assert victim.read_text() == "precious" and read_manifest(out / "manifest.json")["step"] == "demo"


def test_a_stranger_manifest_and_a_device_are_never_replaced(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "manifest.json").write_text('{"mine": 1}')  # a file of the user's that happens to be called so
    with pytest.raises(InputError, match="it names no step"):
        _run(out, inp)
    assert (out / "manifest.json").read_text() == '{"mine": 1}'
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as err:
        with Step("one", manifest=manifest_beside(fifo), outputs=[fifo], inputs=[inp]):
            raise AssertionError("the body must not run")
    assert str(err.value) == f"--out {fifo}: not a regular file (a device, pipe or socket); choose a file path"
    assert stat.S_ISFIFO(fifo.stat().st_mode) and not manifest_beside(fifo).exists()


def test_a_one_file_step_never_replaces_a_file_it_did_not_write(tmp_path: Path, inp: Path) -> None:
    docs = tmp_path / "docs.json"
    docs.write_text("the user's documents")
    with pytest.raises(InputError) as err:
        with Step("one", manifest=manifest_beside(docs), outputs=[docs], inputs=[inp]):
            raise AssertionError("the body must not run")
    assert str(err.value) == (f"--out {docs}: docs.json is there and no `one` run wrote it; move it, or choose "
                              "another --out, or pass --force to replace it")
    assert docs.read_text() == "the user's documents" and not manifest_beside(docs).exists()
    for _ in range(2):  # forced once, it is this step's: a rerun rewrites it without --force
        with Step("one", manifest=manifest_beside(docs), outputs=[docs], inputs=[inp], parameters={"n": _},
                  force=_ == 0) as step:
            step.path(docs).write_text(f"run {_}")
    assert docs.read_text() == "run 1"


def test_another_steps_folder_is_refused_and_force_removes_none_of_it(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    with Step("ingest-dump", root=out, outputs=["entities/", "x.txt"], inputs=[inp]) as step:
        step.path("entities/").mkdir()
        (step.path("entities/") / "part-0.parquet").write_text("t")
        step.path("x.txt").write_text("x")
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(InputError) as err:
        _run(out, inp, outputs=("x.txt", "a.txt"))
    assert str(err.value) == (f"--out {out}: manifest.json there describes the output of `ingest-dump` "
                              "(entities/part-0.parquet, x.txt), not `demo`; choose another --out, or pass --force "
                              "to write this step's files beside them (none of theirs is removed; manifest.json then describes this step)")
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    _run(out, inp, outputs=("a.txt",), force=True)
    assert (out / "entities" / "part-0.parquet").read_text() == "t" and (out / "x.txt").read_text() == "x"
    assert read_manifest(out / "manifest.json")["step"] == "demo"


def test_an_output_name_taken_by_a_stranger_needs_force(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "a.txt").write_text("the user's own")
    with pytest.raises(InputError) as err:
        _run(out, inp)
    assert str(err.value) == (f"--out {out}: a.txt is there and no `demo` run wrote it; move it, or choose "
                              "another --out, or pass --force to replace it")
    assert (out / "a.txt").read_text() == "the user's own"
    _run(out, inp, force=True)
    assert (out / "a.txt").read_text() == "a-a.txt"


def test_a_folder_output_holding_a_stranger_is_refused_even_with_force(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    (out / "table").mkdir(parents=True)
    (out / "table" / "notes.txt").write_text("mine")
    for force in (False, True):
        with pytest.raises(InputError) as err:
            with Step("demo", root=out, outputs=["table/"], inputs=[inp], force=force):
                raise AssertionError("the body must not run")
        assert str(err.value) == (f"--out {out}: table/ holds files that no `demo` run wrote (table/notes.txt); "
                                  "move them out of it, or choose another --out")
    assert (out / "table" / "notes.txt").read_text() == "mine"


def test_a_listed_symlink_or_parent_path_is_never_removed(tmp_path: Path, inp: Path) -> None:
    out = tmp_path / "o"
    _run(out, inp)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "link.txt").symlink_to(victim)
    from etl.io import sha256_file

    man = read_manifest(out / "manifest.json")
    man["outputs"] += [{"name": "link.txt", "sha256": sha256_file(victim)},
                       {"name": "../victim.txt", "sha256": sha256_file(victim)},
                       {"name": str(victim), "sha256": sha256_file(victim)}]
    (out / "manifest.json").write_text(json.dumps(man))
    _run(out, inp, params={"k": 2}, outputs=("a.txt",))
    assert victim.read_text() == "precious" and (out / "link.txt").is_symlink()
    assert not (out / "b.txt").exists()  # the step's own stale output still goes


def test_a_crashed_publish_leaves_a_claim_that_only_the_same_step_may_use(tmp_path: Path, inp: Path,
                                                                          monkeypatch) -> None:
    out = tmp_path / "o"
    _run(out, inp)
    real = os.replace

    def failing(src, dst):  # the claim is written; moving the first output fails
        if Path(dst).name == "a.txt":
            raise OSError("disk gone")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError):
        _run(out, inp, params={"k": 5})
    monkeypatch.setattr(os, "replace", real)
    assert not (out / "manifest.json").exists()
    assert read_manifest(out / ".manifest.json.publishing")["step"] == "demo"
    with pytest.raises(InputError, match=r"^--out .*: .manifest.json.publishing there describes the output of `demo` \(a.txt, b.txt\), not"):
        with Step("other", root=out, outputs=["a.txt"], inputs=[inp]):
            raise AssertionError("the body must not run")
    assert not _run(out, inp, params={"k": 5}).up_to_date
    assert _names(out) == ["a.txt", "b.txt", "manifest.json"]


def test_a_dangling_symlink_output_is_named_as_such(tmp_path: Path, inp: Path) -> None:
    """mkdir on a link to nothing says "File exists", which sends the user looking for a file."""
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError) as err:
        _run(link, inp)
    assert str(err.value) == (f"--out {link}: a symbolic link to {tmp_path / 'nowhere'}, which does not exist; "
                              "remove the link, or choose another path")
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_signal_right_after_the_staging_folder_is_made_leaves_nothing(tmp_path: Path, inp: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # mkdtemp made the staging folder before the step had recorded it: a SIGTERM landing there (the hostile
    # SIGTERM test did, about one run in two) left ".staging-generate-*" in --out
    real_mkdir = os.mkdir

    def interrupted(path, *args, **kwargs):
        real_mkdir(path, *args, **kwargs)
        if os.path.basename(path).startswith(".envbench-new-"):  # a staging folder is made (make_staging)
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C: its KeyboardInterrupt lands when signals may

    monkeypatch.setattr(os, "mkdir", interrupted)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        _run(out, inp)
    assert not out.exists() or _names(out) == []


def test_a_staging_folder_appears_under_its_name_marked_and_a_kill_before_that_is_cleaned_up(
        tmp_path: Path, inp: Path) -> None:
    """make_staging marks the folder as ``.envbench-new-*`` and renames it, so a SIGKILL (which nothing can
    defer) never leaves ``.staging-<step>-*`` unmarked; a marked ``.envbench-new-*`` of the step, what a
    kill before the rename leaves, goes with the next run; an unmarked one, or another owner's, stays."""
    from etl.step import STAGING_MARKER, make_staging, mark_staging

    folder = make_staging(tmp_path, ".staging-demo-", "demo")
    assert folder.name.startswith(".staging-demo-") and (folder / STAGING_MARKER).is_file()
    assert not list(tmp_path.glob(".envbench-new-*"))
    out = tmp_path / "out"
    out.mkdir()
    left = out / ".envbench-new-killed"
    left.mkdir()
    mark_staging(left, "demo")
    (left / "half.json").write_text("{")
    mine, other = out / ".envbench-new-mine", out / ".envbench-new-other"
    mine.mkdir()
    other.mkdir()
    mark_staging(other, "another-step")
    _run(out, inp)
    assert not left.exists() and mine.is_dir() and other.is_dir()


def test_an_own_folder_step_writes_only_into_a_new_empty_or_own_folder(tmp_path: Path, inp: Path,
                                                                      monkeypatch) -> None:
    """`export --out .` had written its dataset among whatever the folder held (found by a hostile-input probe)."""
    out = tmp_path / "o"
    (out / "sub").mkdir(parents=True)
    (out / "mine.txt").write_text("mine")
    for force in (False, True):
        with pytest.raises(InputError) as err:
            _run(out, inp, own_folder=True, force=force)
        assert str(err.value) == (f"--out {out}: holds mine.txt, sub/, which no `demo` run wrote; choose a new or "
                                  "empty folder for --out, or move them out")
    assert _names(out) == ["mine.txt", "sub"]
    (out / "sub").rmdir()
    with pytest.raises(InputError, match=r"holds mine.txt, which no `demo` run wrote; .* or move it out$"):
        _run(out, inp, own_folder=True)
    assert not _run(out, inp).up_to_date  # without own_folder the files are written beside (the old rule)
    (out / "mine.txt").unlink()
    # a folder this step wrote stays its own, with a file added later, and after a crashed publish (the claim)
    assert not _run(out, inp, own_folder=True, params={"k": 2}).up_to_date
    (out / "notes.txt").write_text("mine")
    assert not _run(out, inp, own_folder=True, params={"k": 3}).up_to_date
    real = os.replace

    def failing(src, dst):
        if Path(dst).name == "a.txt":
            raise OSError("disk gone")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError):
        _run(out, inp, own_folder=True, params={"k": 4})
    monkeypatch.setattr(os, "replace", real)
    assert not (out / "manifest.json").exists()
    with pytest.raises(InputError, match=r"holds notes.txt, which no `demo` run wrote"):
        _run(out, inp, own_folder=True, params={"k": 4})  # the claim vouches for its files, not for notes.txt
    (out / "notes.txt").unlink()
    assert not _run(out, inp, own_folder=True, params={"k": 4}).up_to_date
    assert _names(out) == ["a.txt", "b.txt", "manifest.json"]
    # an empty folder, and one that is not there yet, are fine
    (tmp_path / "empty").mkdir()
    assert not _run(tmp_path / "empty", inp, own_folder=True).up_to_date
    assert not _run(tmp_path / "new", inp, own_folder=True).up_to_date


def test_an_output_given_by_another_option_is_named_by_it(tmp_path: Path) -> None:
    """kb-from-corpus's --links, a hard link to an input, had been reported as --out's."""
    docs, links = tmp_path / "t.json", tmp_path / "hard.json"
    docs.write_text("[]")
    links.hardlink_to(docs)
    with pytest.raises(InputError) as err:
        with Step("demo", manifest=manifest_beside(tmp_path / "kb.json"), outputs=[tmp_path / "kb.json", links],
                  inputs=[docs], output_options={links: "--links"}):
            raise AssertionError("the body must not run")
    assert str(err.value) == (f"--links {links}: the input {docs} would be overwritten by this step's output {links}; "
                              "choose another output location or move the input")


def test_resolves_inside_is_the_folder_or_below_it_once_resolved(tmp_path: Path, monkeypatch) -> None:
    """The one rule for "an output inside a folder that is read" (Step's ``protected``, train's --out)."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    (data / "runs").mkdir(parents=True)
    assert resolves_inside("data/runs/a", "data") and resolves_inside("data", "data")  # neither need exist below
    assert resolves_inside(data / "runs" / "new" / "deeper", data)
    assert not resolves_inside("data", "data/runs") and not resolves_inside("data2", "data")  # no string prefix
    assert not resolves_inside("data/runs/../../elsewhere", "data")  # ".." applied
    (tmp_path / "link").symlink_to(data, target_is_directory=True)
    assert resolves_inside("link/runs/a", "data") and resolves_inside("data/runs", "link")  # symlinks followed
    (data / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert not resolves_inside("data/out/a", "data")  # a symlink leading out is outside


def test_an_output_inside_a_protected_folder_is_refused(tmp_path: Path, inp: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    with pytest.raises(InputError) as e, Step("s", root=index / "sub", outputs=["o.txt"], inputs=[inp],
                                              protected=[index]):
        pass
    assert str(e.value) == f"--out {index / 'sub' / 'o.txt'}: inside {index}, which this step reads; " \
                           "choose an output outside it"
    assert not (index / "sub").exists()


KILL_WHILE_PUBLISHING = """
import os, signal, sys
from pathlib import Path
from etl.step import Step

real = os.replace

def replace(src, dst):
    if Path(dst).name == sys.argv[3]:  # the temporary file is written whole: SIGKILL before its rename
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst)

os.replace = replace
with Step("demo", root=sys.argv[1], outputs=["a.txt", "b.txt"], inputs=[sys.argv[2]], parameters={"k": 1}) as step:
    for name in ("a.txt", "b.txt"):
        step.path(name).write_text("killed-" + name)
"""


@pytest.mark.parametrize("target", [".manifest.json.publishing", "manifest.json"])
def test_a_sigkill_while_the_claim_or_manifest_is_written_leaves_nothing_the_rerun_keeps(
        tmp_path: Path, inp: Path, target: str) -> None:
    """Issue 56: one SIGKILL in 30 of `generate` left `..manifest.json.publishing.<hex>.tmp` in OUT, which no
    rerun removed. The temporary files of the claim and the manifest are made in the step's marked staging
    folder, which the rerun removes; a file of the user's named like one is kept."""
    import subprocess
    import sys

    out = tmp_path / "o"
    out.mkdir()
    users = out / f".{target}.0badc0de.tmp"
    users.write_text("mine")
    proc = subprocess.run([sys.executable, "-c", KILL_WHILE_PUBLISHING, str(out), str(inp), target],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    left = [p for p in out.rglob("*.tmp") if p.name.startswith(f".{target}.") and p != users]
    assert len(left) == 1 and left[0].parent.name.startswith(".staging-demo-"), sorted(out.rglob("*"))
    assert not _run(out, inp).up_to_date
    assert _names(out) == sorted(["a.txt", "b.txt", "manifest.json", users.name])
    assert users.read_text() == "mine" and (out / "a.txt").read_text() == "a-a.txt"


def test_a_full_disk_or_a_size_limit_names_the_output_not_the_staging_folder(tmp_path: Path, inp: Path) -> None:
    """Issue 56: a write that names no file (pyarrow's, gzip's) is named by the step's output, and one in the
    staging folder by the output it stages; other errors pass unchanged."""
    import errno

    out = tmp_path / "o"
    cases = [(lambda staged: OSError("[errno 28] No space left on device"), errno.ENOSPC, out),
             (lambda staged: OSError(errno.EFBIG, "File too large"), errno.EFBIG, out),
             (lambda staged: OSError(errno.ENOSPC, "No space left on device", str(staged)), errno.ENOSPC, out / "a.txt"),
             (lambda staged: OSError(errno.ENOSPC, "No space left on device", "/elsewhere/x"), errno.ENOSPC,
              Path("/elsewhere/x")),
             (lambda staged: OSError(errno.EIO, "Input/output error"), errno.EIO, None)]
    for make, code, named in cases:
        with pytest.raises(OSError) as err, Step("demo", root=out, outputs=["a.txt"], inputs=[inp]) as step:
            raise make(step.path("a.txt"))
        assert err.value.errno == code and (err.value.filename == (None if named is None else str(named)))
        assert not out.exists()
