"""One lifecycle for every step that writes files: check, skip, stage, publish, manifest last.

    with Step("generate", root=out, outputs=["test_env.json", "stats.json"], inputs=[docs],
              parameters={"seeds": 5}, identity={"index": fingerprint}, force=force) as step:
        if step.up_to_date:
            return ...                      # nothing is written
        write_things(step.path("test_env.json"), step.path("stats.json"))
    # the block ended without an exception: every output is in place, then the manifest

Contract, in the order things happen:

1. **Paths are checked before any work.** Each output's folder can be written (a probe file is
   created and removed), nothing else has an output's name (a folder where a file goes, a file
   where a folder goes, a device or pipe), no output is the step's own manifest nor inside a
   folder the step reads whole (``protected``: an index), and no input is an output: an input that resolves to an output, to the
   manifest, or to a file the previous manifest lists (which publishing may remove) is refused.
2. **One writer at a time.** The step holds an exclusive ``flock`` on the manifest's folder
   (no lock file is left behind) from the check to the end; a second run into the same folder
   fails at once, naming it. Under the lock, what a killed run of the same step left is removed:
   its staging folders (``.staging-<step>-*`` that hold the step's marker, see 4; a folder of that
   name without the marker is the user's and is left alone, even empty), and a claim (6) of this step beside a
   manifest of this step (the manifest is written only after everything the claim covers, so such
   a claim is stale: a kill between writing the manifest and removing the claim leaves one).
3. **Up to date?** Unless ``force`` or ``rerun``, the manifest at ``root`` is compared with this run: same step
   name, package version, code (``etl.manifest.code_fingerprint``), input sha256s, parameters and identity, the same output names, and every
   listed output still present with its sha256. Then ``step.up_to_date`` is true and the step
   writes nothing. A manifest that is damaged or not an object is never up to date (and, without
   ``force``, refused: point 5).
4. **Staging.** ``step.path(name)`` is a path in a staging folder beside the output (same file
   system, so the rename is atomic). The body writes a file or a whole folder there. Every staging
   folder is made new (never reused) with a marker file (:data:`STAGING_MARKER`, whose text names the
   step: :func:`mark_staging`): :func:`make_staging` makes and marks it as ``.envbench-new-*`` and renames
   it, so it never exists unmarked under its own name, and a kill before the rename leaves a marked
   ``.envbench-new-*`` that the next run removes (:func:`remove_new_staging`); when marking fails, the
   run removes the folder it has just made. Nothing removes a staging-named folder without the marker
   (:func:`remove_staging`), so a user's ``.staging-generate-mine`` survives every run, and so does an
   empty ``.staging-generate-0badc0de``: a name, even in the step's exact form, never makes a folder
   ours. The marker is removed last, from the emptied folder. SIGINT and SIGTERM wait while a folder
   is made and marked, or unmarked and removed (:func:`signals_deferred`); only a SIGKILL in the instant
   before a new folder's marker is written, or between the marker's removal and the ``rmdir``, leaves an
   empty folder (``.envbench-new-*``, or the staging name), which no run removes (it holds nothing;
   nothing tells it from a user's).
5. **What is ours** (:meth:`Step.ownership`, the one deletion rule). A step replaces or removes
   only files that an earlier run *of the same step* wrote, as its manifest (or the claim a crashed
   publish left, see 6) lists them:

   * a manifest written by another step (``generate`` into an index folder, ``ingest-dump`` into a
     benchmark) is refused with one line naming that step and its files; ``force`` writes this
     step's outputs beside them and still removes none of theirs (the manifest then describes this
     step); so is a JSON object that names no step (a file of the user's called ``manifest.json``);
   * a listed name is ours only when it is relative, has no ``..``, is no symlink and resolves
     inside the manifest's folder; a one-file step (``manifest=``) removes nothing but the outputs
     it rewrites, so a planted ``X.manifest.json`` can name nothing else to delete;
   * an output name taken by a file that no run of this step wrote (its manifest, or the old one
     beside a one-file output, does not list it: ``evaluate --out docs.json``) is refused (``force``
     replaces it); a folder output holding such files is refused even with ``force``, since swapping
     the folder would remove them. An output that is not a regular file (``/dev/null``, a pipe) is
     refused always. A manifest that is not JSON, or not an object, is no step's (a step writes its
     manifest atomically, so a crash never leaves one half written): it is refused unless ``force``, and
     with ``force`` it is taken for a damaged one of ours: the files at its output names may be
     replaced, but not a folder output holding files;
   * with ``own_folder`` (``export``'s dataset folder, whose every file is published), a root that holds
     anything while neither a manifest nor a claim of this step is there is refused, ``force`` or not
     (:meth:`Step._check_own_folder`).
6. **Publishing**, only when the block ends without an exception: a claim
   (``.<manifest>.publishing``, the step and every file it may own) is written, the old manifest
   is removed, each output is renamed into place (a folder output swaps with the old folder),
   outputs of the old manifest that this run did not write are removed (ours by 5, same sha256),
   the new manifest is written, the claim removed. A crash anywhere leaves either no manifest
   (never "up to date") or a complete one, and the claim tells the rerun which files are its own.
   The claim and the manifest are written through temporary files made in a staging folder beside
   them (marked, 4), so a SIGKILL while one is written leaves it there, for the rerun to remove with
   the folder. A full disk or a file-size limit that names no file, or a staged one, is reported as
   the output's (``--out``, or the output staged), never as a staging path or no path at all.
   On an exception the staging folders are removed and the old outputs stay as they were; an
   output folder this run created and left empty is removed too. The same marker rule serves the
   other staging of the pipeline (``wikidata_index.ingest``'s chunk stage, spool and
   ``index.duckdb`` temporary): a tool removes a folder of its own only when the marker is there.

Two shapes: ``root`` is the output folder (its ``manifest.json`` describes the folder), or
``manifest`` names the manifest file and ``outputs`` are file paths anywhere (``link --out
L.json`` writes ``L.json`` and ``L.json.manifest.json``). Errors are ``InputError`` with one line
that names the path and the fix, and the command's option: ``option`` (``--out``) for the step, and
``output_options`` for an output given by another option (``--links``, ``--report``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from etl.io import InputError, is_no_space, is_too_large, listed, write_json_atomic
from etl.manifest import build_manifest, describe_file

MANIFEST = "manifest.json"
CLAIM_SUFFIX = ".publishing"
# Written into every staging folder when it is made: a stale one is removed only when it holds this
# file with the text naming its owner, never for its name alone (a user's ".staging-x" is kept).
STAGING_MARKER = ".envbench-staging"
MARKER_MAX_BYTES = 4096  # a marker is one short line: more is no marker of ours (and is not read whole)
COMPARED = ("step", "package_version", "code_sha256", "inputs", "parameters", "identity")


def manifest_beside(path: str | os.PathLike[str]) -> Path:
    """The manifest of a one-file output: ``L.json`` -> ``L.json.manifest.json``."""
    p = Path(path)
    return p.with_name(p.name + ".manifest.json")


def check_writable(path: str | os.PathLike[str], option: str, *, folder: bool = False) -> None:
    """Fail before any work unless ``path`` (a file, or with ``folder`` a folder) can be written.

    Probes the nearest existing folder with a temporary file, so a long run never ends in an
    error about an unwritable output (and never leaves one output written and another missing).
    """
    target = Path(path)
    if target.is_symlink() and not target.exists():  # mkdir would say "File exists", which it does not
        raise InputError(f"{option} {path}: a symbolic link to {os.readlink(target)}, which does not exist; "
                         "remove the link, or choose another path")
    if folder and target.exists() and not target.is_dir():
        raise InputError(f"{option} {path}: a file has that name; choose a folder path")
    if not folder and target.is_dir():
        raise InputError(f"{option} {path}: a folder has that name; choose a file path")
    if not folder and target.exists() and not target.is_file():  # publishing would replace /dev/null
        raise InputError(f"{option} {path}: not a regular file (a device, pipe or socket); choose a file path")
    base = target if folder else target.parent
    while not base.exists() and base != base.parent:
        base = base.parent
    if not base.is_dir():
        raise InputError(f"{option} {path}: {base} is a file, not a folder; choose another path")
    try:
        fd, probe = tempfile.mkstemp(prefix=".envbench-probe-", dir=base)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write in {base} ({exc.strerror or exc}); "
                         "choose a location you can write to") from None


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest at ``path`` as a dict, or None when it is missing, damaged or not an object."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _marker_text(owner: str) -> bytes:
    return f"envbench staging folder of {owner}; the next run of {owner} removes it\n".encode()


def mark_staging(folder: Path, owner: str) -> None:
    """Write the marker that makes ``folder`` (just made by ``owner``: a step's name, or another
    tool's such as "ingest-dump chunks") removable by a later run of the same owner."""
    (folder / STAGING_MARKER).write_bytes(_marker_text(owner))


def is_staging(path: Path, owner: str) -> bool:
    """Whether ``path`` is a staging folder that ``owner`` made: a real folder (no symlink) holding
    ``owner``'s marker as a regular file."""
    marker = path / STAGING_MARKER
    if path.is_symlink() or not path.is_dir() or marker.is_symlink() or not marker.is_file():
        return False
    try:
        with open(marker, "rb") as fh:
            return fh.read(MARKER_MAX_BYTES) == _marker_text(owner)
    except OSError:
        return False


# Ctrl-C, and SIGTERM, which the CLI turns into an exception (or whose default ends the process)
DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends, then reach the handlers they would have reached
    (KeyboardInterrupt, the CLI's SystemExit, the default end of the process): a staging folder is made
    and marked, or unmarked and removed, as one step, since a folder without its marker is never removed
    (:func:`remove_staging`). Their handlers are swapped for ones that note the signal, rather than the
    signals blocked: Python runs a handler in the main thread whichever thread the signal reaches. Off
    the main thread nothing waits, nor need it: no handler interrupts that thread. An ignored signal
    stays ignored. SIGKILL cannot wait: a kill in that instant still leaves an empty folder."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    swapped: dict[int, Any] = {}
    try:
        for sig in DEFERRED_SIGNALS:
            handler = signal.getsignal(sig)
            if handler is not None and handler is not signal.SIG_IGN:  # None: set outside Python, left as it is
                swapped[sig] = handler
                signal.signal(sig, lambda signum, frame: caught.append(signum))
        yield
    finally:
        for sig, handler in swapped.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)


# A staging folder is made and marked under this name first, then renamed to its own: it appears under
# ``<prefix><8 hex>`` marked already, so no kill, SIGKILL included, leaves one of those unmarked
NEW_STAGING = ".envbench-new-"


def make_staging(parent: Path, prefix: str, owner: str) -> Path:
    """A new folder ``parent/<prefix><8 hex>`` with ``owner``'s marker (never one that was there). It is
    made as ``.envbench-new-*`` (:data:`NEW_STAGING`), marked there and renamed, so it never exists
    unmarked under its own name; a kill before the rename leaves the marked ``.envbench-new-*``, which
    :func:`remove_new_staging` removes. Signals wait meanwhile (:func:`signals_deferred`); hold them
    around the call too to record the folder before one lands (``Step`` does)."""
    while True:
        folder = parent / f"{prefix}{secrets.token_hex(4)}"
        if folder.exists() or folder.is_symlink():  # somebody's folder has the name: not ours to use or remove
            continue
        try:
            make_marked(folder, owner)
        except FileExistsError:
            continue
        return folder


def make_marked(folder: Path, owner: str) -> None:
    """Make the new folder ``folder`` with ``owner``'s marker, never unmarked under its name: made as
    ``.envbench-new-*`` (:data:`NEW_STAGING`) beside it, marked there and renamed, signals waiting
    meanwhile. FileExistsError, and nothing left, when something has the name, even one made meanwhile
    (a rename would replace an empty folder); a kill before the rename leaves the marked
    ``.envbench-new-*``, which :func:`remove_new_staging` removes. ``make_staging`` and ingest-dump's stage
    (a name of its own) are made so."""
    with signals_deferred():
        fresh = Path(tempfile.mkdtemp(prefix=NEW_STAGING, dir=folder.parent))
        try:
            mark_staging(fresh, owner)
            if folder.exists() or folder.is_symlink():
                raise FileExistsError(folder)
            os.rename(fresh, folder)
        except BaseException:  # the folder this call made goes now: a full disk, the name taken
            _discard_new(fresh)
            raise


def _discard_new(fresh: Path) -> None:
    """Remove a folder :func:`make_marked` has just made (empty but for the marker, if marked yet)."""
    with contextlib.suppress(OSError):
        (fresh / STAGING_MARKER).unlink(missing_ok=True)
        fresh.rmdir()


def remove_new_staging(parent: Path, owner: str) -> None:
    """Remove the ``.envbench-new-*`` folders of ``owner`` in ``parent`` (marked, by :func:`is_staging`):
    what a kill between marking a staging folder and renaming it leaves (:func:`make_staging`)."""
    for stale in parent.glob(f"{NEW_STAGING}*"):
        remove_staging(stale, owner)


def remove_staging(path: Path, owner: str) -> bool:
    """Remove ``path`` when it is ``owner``'s staging folder (:func:`is_staging`); True when it was.
    Anything else is left as it is, an empty folder in exactly the form the owner makes included: a
    tool deletes no folder it did not write, and without the marker nothing says it did."""
    if not is_staging(path, owner):
        return False
    for child in path.iterdir():
        if child.name == STAGING_MARKER:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()
    # The marker goes last, and only from an emptied folder: a run killed while removing leaves the
    # folder still marked, so the next run removes the rest.
    if [c.name for c in path.iterdir()] == [STAGING_MARKER]:
        with signals_deferred(), contextlib.suppress(OSError):  # no signal between the two: unmarked is for good
            (path / STAGING_MARKER).unlink()
            path.rmdir()
    return True


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    with contextlib.suppress(OSError):
        return os.path.samefile(a, b)
    return False


def _listed_outputs(manifest: Mapping[str, Any] | None, base: Path) -> list[Path]:
    return [base / o["name"] for o in _entries(manifest)]


def _entries(manifest: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The well-formed output entries of a manifest (a dict with a string name)."""
    if not manifest or not isinstance(manifest.get("outputs"), list):
        return []
    return [o for o in manifest["outputs"] if isinstance(o, dict) and isinstance(o.get("name"), str)]


def claim_of(manifest_path: Path) -> Path:
    """Where a publish in progress records what it owns: ``.<manifest name>.publishing`` beside it."""
    return manifest_path.with_name(f".{manifest_path.name}{CLAIM_SUFFIX}")


def _inside(base: Path, name: str) -> Path | None:
    """``base / name`` when it stays inside ``base``: relative, no ``..``, no symlink on the way."""
    rel = Path(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        return None
    path = base / rel
    probe = path
    while probe != base:  # a symlink anywhere below base could lead out
        if probe.is_symlink():
            return None
        probe = probe.parent
    if not path.resolve().is_relative_to(base.resolve()):
        return None
    return path


def resolves_inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is ``folder`` or lies below it, both resolved first (symlinks followed, ``..``
    applied; neither need exist): the rule by which a step refuses an output inside a folder it reads
    (``protected``), and ``envbench train`` an ``--out`` inside a dataset folder of its documents.

    ``resolves_inside("data/runs/a", "data")`` and ``resolves_inside("data", "data")`` are true;
    ``resolves_inside("data", "data/runs")`` and ``resolves_inside("data2", "data")`` are false."""
    return Path(path).resolve().is_relative_to(Path(folder).resolve())


def _files_under(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path]


class Step:
    """A step that writes: see the module docstring for the contract."""

    def __init__(
        self,
        name: str,
        *,
        outputs: Sequence[str | os.PathLike[str]],
        root: str | os.PathLike[str] | None = None,
        manifest: str | os.PathLike[str] | None = None,
        inputs: Sequence[str | os.PathLike[str] | Mapping[str, Any]] = (),
        parameters: Mapping[str, Any] | None = None,
        identity: Mapping[str, Any] | None = None,
        force: bool = False,
        rerun: bool = False,
        option: str = "--out",
        force_flag: str | None = "--force",
        protected: Sequence[str | os.PathLike[str]] = (),
        output_options: Mapping[str | os.PathLike[str], str] | None = None,
        own_folder: bool = False,
    ) -> None:
        if (root is None) == (manifest is None):
            raise ValueError("give exactly one of root (an output folder) or manifest (a manifest file)")
        self.name = name
        self.option = option
        self.force = force  # the user's --force: redo, and write beside another step's files
        self.rerun = rerun  # never up to date (a step that always recomputes, or restarts itself)
        self.force_flag = force_flag  # the command's flag for ``force``, named in errors (None: none)
        self.root = Path(root) if root is not None else None
        self.manifest_path = self.root / MANIFEST if self.root is not None else Path(manifest)  # type: ignore[arg-type]
        self.base = self.manifest_path.parent  # output names in the manifest are relative to it
        # a name ending in "/" is a folder output (written whole, swapped whole); others are files
        self.folders = {self._resolve_output(o) for o in outputs if str(o).endswith("/")}
        self.outputs = [self._resolve_output(o) for o in outputs]
        if len({str(o) for o in self.outputs}) != len(self.outputs):
            raise ValueError(f"step {name}: an output is named twice")
        if any(o.name == STAGING_MARKER for o in self.outputs):  # it would be staged over the marker
            raise ValueError(f"step {name}: {STAGING_MARKER} is the staging marker's name, not an output's")
        self.inputs = list(inputs)
        self.protected = [Path(p) for p in protected]  # folders read whole (an index): no output inside one
        # the command's option of an output that is not the step's main one ("--links" of kb-from-corpus), so
        # that a message about that file names the option the user gave it with
        self.output_options = {self._resolve_output(o): opt for o, opt in (output_options or {}).items()}
        # the folder is the step's alone (a dataset folder whose every file is published): one that holds
        # anything while no manifest or claim of this step is there is refused, ``force`` or not
        self.own_folder = own_folder
        if own_folder and self.root is None:
            raise ValueError(f"step {name}: own_folder needs root (an output folder)")
        # the flag named in a fix for files that are not this step's: none for an own folder, which ``force``
        # does not open to another step's or a user's files (export had suggested --force, then refused it)
        self.force_hint = None if own_folder else force_flag
        self.parameters = dict(parameters or {})
        self.identity = dict(identity or {})
        self.info: dict[str, Any] = {}  # written to the manifest, never compared (timings, counts)
        self.up_to_date = False
        self.manifest: dict[str, Any] | None = None  # the published manifest, after the block
        self._probe: dict[str, Any] = {}
        self._lock_fd: int | None = None
        self._staging: dict[Path, Path] = {}  # output folder -> its staging folder
        self._created_root = False
        self._owned: list[dict[str, Any]] = []  # entries of earlier runs of this step (ownership)

    def _option_of(self, output: Path) -> str:
        """The command's option that gave ``output`` (``output_options``), else the step's own (``option``)."""
        return self.output_options.get(output, self.option)

    def _resolve_output(self, output: str | os.PathLike[str]) -> Path:
        name = str(output).rstrip("/")
        return self.base / name if self.root is not None else Path(name)

    # ------------------------------------------------------------------ entering: check and lock
    def __enter__(self) -> Step:
        if self.root is not None:
            check_writable(self.root, self.option, folder=True)
        probed: set[Path] = set()
        for out in self.outputs:  # a name taken by the wrong kind of thing, for every output
            option = self._option_of(out)
            if out in self.folders and out.exists() and not out.is_dir():
                raise InputError(f"{option} {out}: a file has that name; choose a folder path")
            if out not in self.folders and out.is_dir():
                raise InputError(f"{option} {out}: a folder has that name; choose a file path")
            if out not in self.folders and out.exists() and not out.is_file():
                raise InputError(f"{option} {out}: not a regular file (a device, pipe or socket); "
                                 "choose a file path")
            if out.parent not in probed:  # writability: one probe per folder, not per output
                probed.add(out.parent)
                check_writable(out, option, folder=out in self.folders)
        for out in self.outputs:
            if self.root is None and out.resolve() in (self.manifest_path.resolve(),
                                                       claim_of(self.manifest_path).resolve()):
                raise InputError(f"{self.option} {self.outputs[0]}: {out} is the manifest this step writes beside "
                                 f"{self.outputs[0].name}; give that output another name")
            for folder in self.protected:
                if resolves_inside(out, folder):
                    raise InputError(f"{self._option_of(out)} {out}: inside {folder}, which this step reads; "
                                     "choose an output outside it")
        if self.manifest_path.exists() and not self.manifest_path.is_file():
            raise InputError(f"{self.option} {self.root or self.outputs[0]}: {self.manifest_path} is not a regular "
                             "file; choose another output location")
        if not self.base.exists():
            self.base.mkdir(parents=True)
            self._created_root = True
        try:
            self._lock()
            self._remove_stale_staging()
            old = read_manifest(self.manifest_path)
            if old is None and self.manifest_path.is_file() and not self.force:
                # a step writes its manifest atomically and last, so no run of ours leaves one that is not a
                # JSON object: this is somebody's file called manifest.json, and replacing it would lose it
                fix = "" if self.force_hint is None else f", or pass {self.force_hint} to replace it"
                raise InputError(f"{self.option} {self.root or self.outputs[0]}: {self.manifest_path.name} there is "
                                 f"not a manifest an envbench step wrote (not a JSON object); move it, or choose "
                                 f"another {self.option}{fix}")
            self._check_inputs(old)
            self._remove_stale_claim(old)
            claim = read_manifest(claim_of(self.manifest_path)) if old is None else None
            self._owned = self.ownership(old if old is not None else claim,
                                         claim_of(self.manifest_path).name if claim else self.manifest_path.name)
            if self.own_folder:
                self._check_own_folder(old, claim)
            described = [dict(i) if isinstance(i, Mapping) else describe_file(i)
                         for i in self.inputs if not (isinstance(i, (str, os.PathLike)) and str(i) == "-")]
            self._probe = {**build_manifest(step=self.name, inputs=[], parameters=self.parameters),
                           "inputs": described, "identity": self.identity}
            self.up_to_date = not (self.force or self.rerun) and self._matches(old)
        except BaseException:
            self._release(failed=True)
            raise
        return self

    def _lock(self) -> None:
        self._lock_fd = hold_folder(self.base, self.option)

    def _remove_stale_staging(self) -> None:
        folders = {self.base, *(o.parent for o in self.outputs)}
        for folder in sorted(folders):
            for stale in folder.glob(f".staging-{self.name}-*"):
                # only with this step's marker: `--out ~/s.json` keeps ~'s folders
                remove_staging(stale, self.name)
            remove_new_staging(folder, self.name)

    def _remove_stale_claim(self, old: Mapping[str, Any] | None) -> None:
        """A claim of this step beside a manifest of this step is stale (contract point 2)."""
        if old is not None and old.get("step") == self.name:
            remove_stale_claim(self.manifest_path, self.name)

    def ownership(self, previous: Mapping[str, Any] | None, source: str = MANIFEST) -> list[dict[str, Any]]:
        """The deletion rule (contract point 5): the entries of ``previous`` (the old manifest, or a
        crashed publish's claim) that this step may replace or remove; refuses what is not ours.

        Raises ``InputError`` when another step's manifest is there (unless ``force``), or when an
        output's name is taken by files no run of this step wrote."""
        where = self.root if self.root is not None else self.outputs[0]
        kind = previous.get("step") if previous else None
        if previous and kind is None and not self.force:
            # a JSON object without a step is no manifest of ours (its author may need it)
            fix = "" if self.force_hint is None else f", or pass {self.force_hint} to replace it"
            raise InputError(f"{self.option} {where}: {source} there is not a manifest an envbench step wrote "
                             f"(it names no step); move it, or choose another {self.option}{fix}")
        if not isinstance(kind, str):  # none, damaged, or a manifest without a step: vouches for nothing
            owned: list[dict[str, Any]] = []
        elif kind != self.name:
            if not self.force:
                names = list(dict.fromkeys(o["name"] for o in _entries(previous)))
                what = f"the output of `{kind}`" + (f" ({listed(names)})" if names else "")
                fix = (f"choose another {self.option}" if self.force_hint is None
                       else f"choose another {self.option}, or pass {self.force_hint} to write this step's files "
                            f"beside them (none of theirs is removed; {self.manifest_path.name} then describes "
                            "this step)")
                raise InputError(f"{self.option} {where}: {source} there describes {what}, "
                                 f"not `{self.name}`; {fix}")
            owned = []
        else:
            owned = [o for o in _entries(previous) if _inside(self.base, o["name"]) is not None]
        # a damaged manifest (not JSON, not an object) is taken for one of ours for the files at its output
        # names, never for what is inside a folder output (a user's names/mine.txt is not swapped away)
        damaged = kind is None and (self.manifest_path.exists() or claim_of(self.manifest_path).exists())
        mine = {(self.base / o["name"]).resolve() for o in owned}
        if self.root is None and kind == self.name:  # a one-file step rewrites its own outputs wherever they are
            mine |= {(self.base / o["name"]).resolve() for o in _entries(previous)}
        for out in self.outputs:
            strangers = [f for f in _files_under(out) if f.exists() and f.resolve() not in mine]
            if not strangers:
                continue
            shown = listed([os.path.relpath(f, self.base) for f in strangers])
            if out in self.folders:
                raise InputError(f"{self.option} {where}: {out.name}/ holds files that no `{self.name}` run wrote "
                                 f"({shown}); move them out of it, or choose another {self.option}")
            if not self.force and not damaged:
                fix = "" if self.force_hint is None else f", or pass {self.force_hint} to replace it"
                option = self.output_options.get(out)
                if option is not None:  # "--links ul.json: ...", not "--out kb.json.gz: ul.json ..."
                    raise InputError(f"{option} {out}: {shown} is there and no `{self.name}` run wrote it; "
                                     f"move it, or choose another {option}{fix}")
                raise InputError(f"{self.option} {where}: {shown} is there and no `{self.name}` run wrote it; "
                                 f"move it, or choose another {self.option}{fix}")
        return owned

    def _check_own_folder(self, old: Mapping[str, Any] | None, claim: Mapping[str, Any] | None) -> None:
        """With ``own_folder``: refuse a root that holds what no run of this step wrote. Its manifest (or
        a crashed publish's claim, with what it lists) vouches for the folder; without either, anything
        there is somebody else's (``export --out .`` had written beside the user's files)."""
        if old is not None and old.get("step") == self.name:
            return
        mine: set[str] = set()
        if old is None and claim is not None and claim.get("step") == self.name:
            mine = {claim_of(self.manifest_path).name, *(Path(o["name"]).parts[0] for o in _entries(claim)
                                                          if _inside(self.base, o["name"]) is not None)}
        strangers = sorted(f"{p.name}/" if p.is_dir() and not p.is_symlink() else p.name
                           for p in self.base.iterdir() if p.name not in mine)
        if strangers:
            raise InputError(f"{self.option} {self.root}: holds {listed(strangers)}, which no `{self.name}` run "
                             f"wrote; choose a new or empty folder for {self.option}, or move "
                             f"{'it' if len(strangers) == 1 else 'them'} out")

    def _check_inputs(self, old: Mapping[str, Any] | None) -> None:
        # the old manifest's files matter only when they are this step's (publishing may remove those);
        # another step's are refused by ``ownership``, with a message about that step
        ours = old if old is not None and old.get("step") == self.name else None
        written = [*self.outputs, self.manifest_path, *_listed_outputs(ours, self.base)]
        for inp in self.inputs:
            if isinstance(inp, Mapping) or str(inp) == "-":
                continue
            src = Path(inp)
            for out in written:
                if _same_file(src, out) or (out.is_dir() and resolves_inside(src, out)):
                    # named by the option that gave that output (kb-from-corpus's --links), else the step's
                    where = (f"{self.output_options[out]} {out}" if out in self.output_options
                             else f"{self.option} {self.root or out}")
                    raise InputError(f"{where}: the input {src} would be overwritten by this step's output {out}; "
                                     "choose another output location or move the input")

    def _matches(self, old: Mapping[str, Any] | None) -> bool:
        if not old:
            return False
        if any(old.get(k) != self._probe.get(k) for k in COMPARED):
            return False
        listed = old.get("outputs")
        if not isinstance(listed, list) or not listed:
            return False
        if not all(isinstance(o, dict) and isinstance(o.get("name"), str) for o in listed):
            return False
        present = {os.path.relpath(f, self.base) for o in self.outputs for f in _files_under(o)}
        if {o["name"] for o in listed} != present:
            return False  # an output is missing, or a declared output was never written
        return all((self.base / o["name"]).is_file()
                   and describe_file(self.base / o["name"])["sha256"] == o.get("sha256") for o in listed)

    # ------------------------------------------------------------------ the body
    def path(self, output: str | os.PathLike[str]) -> Path:
        """The staging path of a declared output (a name under ``root``, or the output's own path)."""
        target = self._resolve_output(output)
        if target not in self.outputs:
            raise ValueError(f"step {self.name}: {output} is not a declared output")
        if self.up_to_date:
            raise RuntimeError(f"step {self.name} is up to date; nothing may be written")
        folder = target.parent
        if folder not in self._staging:
            folder.mkdir(parents=True, exist_ok=True)
            self._staging[folder] = self._new_staging(folder)
        return self._staging[folder] / target.name

    def _new_staging(self, folder: Path) -> Path:
        """A new staging folder in ``folder``, made, marked and recorded before a signal (SIGTERM, Ctrl-C)
        can land, so ``_release`` removes it by its marker (mkdtemp's window had left one behind). A name
        recorded before its ``mkdir``, as before, had ``_release`` rmdir a user's empty folder that the
        ``mkdir`` found there."""
        with signals_deferred():
            staging = self._staging[folder] = make_staging(folder, f".staging-{self.name}-", self.name)
        return staging

    # ------------------------------------------------------------------ leaving: publish or clean
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc_type is None and not self.up_to_date:
                try:
                    self._publish()
                except OSError as failed:
                    raise self._named(failed) from failed
            elif isinstance(exc, OSError):
                named = self._named(exc)
                if named is not exc:
                    raise named from exc
        finally:
            self._release(failed=exc_type is not None)

    def _named(self, exc: OSError) -> OSError:
        """A full disk or a file-size limit, named by where the output goes: a write that names no file
        (pyarrow's, gzip's) gets the step's output, and one in a staging folder the output it stages, so
        that the message names a path the user gave, and the free space of its file system. Other errors,
        and those naming another path, are ``exc`` itself."""
        if not (is_no_space(exc) or is_too_large(exc)):
            return exc
        where = exc.filename2 if exc.filename2 is not None else exc.filename
        if where is None:
            target: Path | None = self.root if self.root is not None else self.outputs[0]
        else:
            target = next((folder / Path(where).relative_to(staging) for folder, staging in self._staging.items()
                           if Path(where).is_relative_to(staging)), None)
            if target is None:
                return exc
        code = exc.errno or (errno.ENOSPC if is_no_space(exc) else errno.EFBIG)
        named = OSError(code, os.strerror(code), str(target))
        if hasattr(exc, "needed_bytes"):
            named.needed_bytes = exc.needed_bytes  # type: ignore[attr-defined] - for the full-disk message
        return named

    def _publish(self) -> None:
        staged = [(self._staging[o.parent] / o.name if o.parent in self._staging else None, o)
                  for o in self.outputs]
        missing = [str(o) for s, o in staged if s is None or not s.exists()]
        if missing:
            raise RuntimeError(f"step {self.name} did not write {', '.join(missing)}")
        # Described before anything moves (same bytes as after): the claim names every file this
        # publish may leave behind, so a rerun after a crash knows them for its own (point 6).
        described = []
        for src, dest in staged:
            assert src is not None
            for f in _files_under(src):
                final = dest / f.relative_to(src) if src.is_dir() else dest
                described.append({**describe_file(f), "name": os.path.relpath(final, self.base)})
        claim = claim_of(self.manifest_path)
        # the claim's and the manifest's temporary files are made in a marked staging folder beside them: a
        # SIGKILL while one is written leaves it there, and the next run removes the folder (point 2), where
        # beside the manifest it had stayed for good ("..manifest.json.publishing.<hex>.tmp")
        scratch = self._scratch()
        write_json_atomic(claim, {"step": self.name, "outputs": [*self._owned, *described]}, indent=True,
                          tmp_dir=scratch)
        with contextlib.suppress(FileNotFoundError):
            self.manifest_path.unlink()  # a crash from here on is never "up to date"
        for src, dest in staged:
            assert src is not None
            if src.is_dir():
                trash = self._staging[dest.parent] / f".old-{dest.name}"
                if dest.exists():
                    os.replace(dest, trash)
                os.replace(src, dest)
            else:
                if dest.is_dir():
                    shutil.rmtree(dest)
                os.replace(src, dest)
        # An output of an earlier run of this step that this run does not write goes, when it is ours
        # (point 5) and still the file that run wrote (same sha256). A one-file step removes nothing:
        # its outputs were rewritten in place, and a planted manifest could name anything beside them.
        kept = {f.resolve() for o in self.outputs for f in _files_under(o)}
        for entry in self._owned if self.root is not None else []:
            listed = _inside(self.base, entry["name"])
            if (listed is None or listed.resolve() in kept or not listed.is_file()
                    or listed.resolve() in (self.manifest_path.resolve(), claim.resolve())
                    or describe_file(listed)["sha256"] != entry.get("sha256")):
                continue
            listed.unlink()
        self.manifest = {**self._probe, **self.info, "outputs": sorted(described, key=lambda d: d["name"])}
        write_json_atomic(self.manifest_path, self.manifest, indent=True, tmp_dir=scratch)
        claim.unlink()

    def _scratch(self) -> Path:
        """A marked staging folder beside the manifest (an output's, or a new one) for its temporary files."""
        folder = self.manifest_path.parent
        return self._staging[folder] if folder in self._staging else self._new_staging(folder)

    def _release(self, *, failed: bool) -> None:
        for staging in self._staging.values():
            remove_staging(staging, self.name)
        self._staging.clear()
        if failed and self._created_root:
            with contextlib.suppress(OSError):
                self.base.rmdir()  # only when empty: the step made it and wrote nothing there
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def remove_stale_claim(manifest_path: Path, step: str) -> bool:
    """Remove the claim beside ``manifest_path`` when ``step`` wrote it (a JSON object naming the step,
    a regular file); True when it did. For a caller that has found ``step``'s manifest there under the
    lock: a claim is stale once the manifest is written (contract point 2)."""
    claim = claim_of(manifest_path)
    if claim.is_symlink() or not claim.is_file():
        return False
    mine = read_manifest(claim)
    if mine is None or mine.get("step") != step:  # not this step's: not ours to remove
        return False
    claim.unlink(missing_ok=True)
    return True


def hold_folder(folder: Path, option: str = "--out") -> int:
    """An exclusive, non-blocking ``flock`` on ``folder`` (no lock file is left); the open descriptor,
    which the caller closes to release it. A second holder fails at once, naming the folder."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise InputError(f"{option} {folder}: another run is writing there now; wait for it to end, "
                         "or choose another output location") from None
    return fd


__all__ = ["MANIFEST", "STAGING_MARKER", "Step", "check_writable", "claim_of", "hold_folder", "is_staging",
           "make_marked", "make_staging", "manifest_beside", "mark_staging", "read_manifest", "remove_new_staging",
           "remove_stale_claim", "remove_staging", "signals_deferred"]
