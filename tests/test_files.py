"""io/files.py: the atomic writer and the output-path checks every command shares.

Nothing here touches /dev: device-like outputs are a FIFO (``os.mkfifo``) and a
directory in ``tmp_path``; interrupted writes run in a child process that is killed.
"""

import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from perceptrons.io import files as files_module
from perceptrons.io.files import (
    STALE_SECONDS,
    OutputPathError,
    check_output_path,
    check_output_paths,
    remove_stale_temporaries,
    write_atomically,
    write_text_atomically,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file types and signals")


def names(folder):
    return sorted(p.name for p in folder.iterdir())


# ----------------------------------------------------------------- check_output_path
def test_an_output_that_is_an_input_is_refused_however_it_is_spelled(tmp_path, monkeypatch):
    data = tmp_path / "data.svm"
    data.write_text("1 1:1\n")
    monkeypatch.chdir(tmp_path)
    for spelling in (data, "data.svm", "./data.svm", f"../{tmp_path.name}/data.svm"):
        with pytest.raises(OutputPathError, match="is the input file"):
            check_output_path(spelling, [str(data)])
    os.link(data, tmp_path / "hard.svm")
    os.symlink(data, tmp_path / "soft.svm")
    for other in ("hard.svm", "soft.svm"):
        with pytest.raises(OutputPathError, match="is the input file"):
            check_output_path(other, [data])
        with pytest.raises(OutputPathError, match="is the input file"):
            check_output_path(data, [other])
    assert data.read_text() == "1 1:1\n"
    # other files, stdin, None and missing inputs are fine
    assert check_output_path("model.npz", [data, "-", None, "missing.svm"]).name == "model.npz"
    (tmp_path / "model.npz").write_text("old model")
    check_output_path("model.npz", [data, "-", None])


def test_the_output_directory_must_exist_and_be_writable(tmp_path):
    with pytest.raises(OutputPathError, match="does not exist"):
        check_output_path(tmp_path / "no" / "such" / "m.npz")
    # plots create their directories: the nearest existing one must be writable
    assert check_output_path(tmp_path / "new" / "p.png", make_parents=True)
    assert not (tmp_path / "new").exists()
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(OutputPathError, match="afile is not a directory"):
        check_output_path(afile / "m.npz")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if not os.access(locked, os.W_OK):  # root ignores permissions: see below
            with pytest.raises(OutputPathError, match="cannot write in the directory"):
                check_output_path(locked / "m.npz")
    finally:
        locked.chmod(0o700)
    assert names(tmp_path) == ["afile", "locked"]  # the probe file is gone


def test_a_directory_that_refuses_files_is_found_before_any_work(tmp_path, monkeypatch):
    import errno
    import tempfile

    from perceptrons.io import files

    monkeypatch.setattr(files.os, "access", lambda *a, **k: False)
    with pytest.raises(OutputPathError, match="permission denied"):
        check_output_path(tmp_path / "m.npz")
    monkeypatch.undo()

    def read_only(*args, **kwargs):  # what os.access cannot see: a read-only mount
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(OutputPathError, match="Read-only file system"):
        check_output_path(tmp_path / "m.npz")


def test_a_directory_is_refused_as_an_output(tmp_path):
    (tmp_path / "models").mkdir()
    with pytest.raises(OutputPathError, match="is a directory"):
        check_output_path(tmp_path / "models")
    with pytest.raises(OutputPathError, match="is a directory"):
        write_text_atomically(tmp_path / "models", "x")
    assert (tmp_path / "models").is_dir() and names(tmp_path / "models") == []


@posix_only
def test_a_socket_is_refused_as_an_output(tmp_path):
    path = tmp_path / "s"
    if len(str(path)) > 100:
        pytest.skip("path too long for a unix socket")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(OutputPathError, match="a socket"):
            check_output_path(path)
        with pytest.raises(OutputPathError, match="a socket"):
            write_text_atomically(path, "x")
    finally:
        server.close()


def test_two_outputs_of_one_run_must_differ(tmp_path):
    with pytest.raises(OutputPathError, match="written twice"):
        check_output_paths([tmp_path / "a.png", None, tmp_path / "./a.png"])
    assert len(check_output_paths([tmp_path / "a.png", tmp_path / "b.png"])) == 2


# ------------------------------------------------------------ what an output may be
@posix_only
def test_a_fifo_is_written_in_place_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert check_output_path(fifo) == fifo  # a stream: nothing to probe
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_atomically(fifo, lambda f: f.write(b"model bytes"))
    reader.join(10)
    assert received == [b"model bytes"]
    assert fifo.is_fifo()  # not replaced by a regular file
    assert names(tmp_path) == ["pipe"]  # no temporary file


@posix_only
def test_a_model_saved_to_a_fifo_arrives_whole(tmp_path):
    import numpy as np

    from perceptrons import AveragedPerceptron, load, save

    X, y = np.eye(4), [0, 1, 0, 1]
    model = AveragedPerceptron(random_state=0).fit(X, y)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    save(model, fifo)
    reader.join(10)
    copy = tmp_path / "copy.npz"
    copy.write_bytes(received[0])
    assert load(copy).predict(X).tolist() == model.predict(X).tolist()


@posix_only
def test_a_character_device_is_written_in_place(tmp_path):
    """A device node like /dev/null, made in tmp_path (root only): zip writers see a
    file whose offsets stay 0, so the content is made in memory first."""
    from perceptrons import AveragedPerceptron, save

    null = tmp_path / "null"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    import numpy as np

    check_output_path(null)
    save(AveragedPerceptron().fit(np.eye(4), [0, 1, 0, 1]), null)
    write_text_atomically(null, "text")
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert names(tmp_path) == ["null"]


def test_a_symlink_output_replaces_its_target_and_stays_a_link(tmp_path):
    (tmp_path / "models").mkdir()
    target = tmp_path / "models" / "v1.npz"
    target.write_text("old")
    link = tmp_path / "current.npz"
    link.symlink_to(target)
    check_output_path(link)
    assert write_text_atomically(link, "new") == link
    assert link.is_symlink() and target.read_text() == "new"
    assert names(tmp_path / "models") == ["v1.npz"]
    dangling = tmp_path / "next.npz"
    dangling.symlink_to(tmp_path / "models" / "v2.npz")
    write_text_atomically(dangling, "v2")
    assert dangling.is_symlink() and (tmp_path / "models" / "v2.npz").read_text() == "v2"


# ------------------------------------------------------------------ temporary files
def test_stale_temporaries_of_dead_processes_or_old_are_removed(tmp_path):
    target = tmp_path / "m.npz"
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead = int(done.stdout)
    mine = os.getpid()
    files = {
        "dead": tmp_path / f".m.npz.{dead}.abcd1234.tmp",
        "alive": tmp_path / f".m.npz.{mine}.abcd1234.tmp",
        "old": tmp_path / f".m.npz.{mine}.old00000.tmp",
        "legacy_new": tmp_path / ".m.npz.x1y2z3w4.tmp",
        "legacy_old": tmp_path / ".m.npz.q1w2e3r4.tmp",
        "other_target": tmp_path / f".other.npz.{dead}.abcd1234.tmp",
    }
    for path in files.values():
        path.write_text("partial")
    old = time.time() - STALE_SECONDS - 60
    for key in ("old", "legacy_old"):
        os.utime(files[key], (old, old))
    removed = remove_stale_temporaries(target)
    assert sorted(p.name for p in removed) == sorted(
        files[k].name for k in ("dead", "old", "legacy_old")
    )
    assert all(files[k].exists() for k in ("alive", "legacy_new", "other_target"))
    # write_atomically does it too, before writing
    files["dead"].write_text("partial")
    write_text_atomically(target, "model")
    assert not files["dead"].exists() and files["alive"].exists()


def test_an_error_while_writing_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "m.npz"
    target.write_text("old")

    def fail(file):
        file.write(b"partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, fail)
    assert target.read_text() == "old" and names(tmp_path) == ["m.npz"]


CHILD = textwrap.dedent(
    """
    import sys, time
    import perceptrons.io.persist as persist
    from perceptrons.cli import main

    real = persist._write_npz

    def slow_write(file, arrays):  # the test hook: a save that takes its time
        real(file, arrays)
        file.flush()
        print("writing", flush=True)
        time.sleep(60)

    persist._write_npz = slow_write
    sys.exit(main(sys.argv[1:]))
    """
)

# A streamed run that stops for a while once its parsed cache holds two chunks.
CACHE_CHILD = textwrap.dedent(
    """
    import sys, time
    from perceptrons.io import _cache
    from perceptrons.cli import main

    real = _cache.ChunkCache.recording

    def recording(self, batches):  # the test hook: the first pass pauses midway
        for i, batch in enumerate(real(self, batches)):
            if i == 1:
                print("cached", flush=True)
                time.sleep(60)
            yield batch

    _cache.ChunkCache.recording = recording
    sys.exit(main(sys.argv[1:]))
    """
)


def _signal_child(script, args, signum, ready, check):
    """Run ``script`` with ``args``; once it prints ``ready``, ``check()`` what is on
    disk and send it ``signum``. Its exit status (``-signum``: ended by the signal)."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PERCEPTRONS_DEBUG"},
    )
    try:
        line = child.stdout.readline()
        assert line == f"{ready}\n", child.stderr.read()
        check()
        child.send_signal(signum)
        child.wait(60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stderr.close()
    return child.returncode


def _kill_during_save(tmp_path, data, model, signum):
    def temporary_exists():
        assert any(p.name.startswith(".m.npz.") for p in tmp_path.iterdir())

    args = ["train", data, "-o", model, "--quiet"]
    return _signal_child(CHILD, args, signum, "writing", temporary_exists)


def _ended_by(signum):
    """How a command ends on ``signum``: SIGTERM and SIGHUP as the signal would end it
    (after cleaning up), SIGINT with "interrupted" and 130."""
    return 130 if signum == signal.SIGINT else -signum


_SIGNALS = [signal.SIGTERM, signal.SIGINT, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]


@posix_only
@pytest.mark.parametrize("signum", _SIGNALS, ids=lambda signum: signum.name)
def test_a_save_interrupted_by_a_signal_removes_its_temporary_file(tmp_path, signum):
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} 1:{i % 3} 2:{i % 2}\n" for i in range(20)))
    model = tmp_path / "m.npz"
    model.write_text("the old model")
    assert _kill_during_save(tmp_path, data, model, signum) == _ended_by(signum)
    assert names(tmp_path) == ["d.svm", "m.npz"]
    assert model.read_text() == "the old model"


@posix_only
@pytest.mark.parametrize("signum", _SIGNALS, ids=lambda signum: signum.name)
def test_a_streamed_run_ended_by_a_signal_leaves_no_parsed_cache(tmp_path, signum):
    """SIGTERM and SIGHUP delete the parse cache as Ctrl-C does (they left it, the size
    of the parsed file, in --cache-dir), and leave no model file."""
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} 1:{i % 3} 2:{i % 2}\n" for i in range(200)))
    cache = tmp_path / "cache"
    cache.mkdir()

    def cache_exists():
        assert [p.suffix for p in cache.iterdir()] == [".cache"]

    args = ["train", data, "-o", tmp_path / "m.npz", "--stream", "--chunk-size", "20"]
    args += ["--epochs", "3", "--cache-dir", cache, "--quiet"]
    assert _signal_child(CACHE_CHILD, args, signum, "cached", cache_exists) == _ended_by(signum)
    assert names(cache) == [] and names(tmp_path) == ["cache", "d.svm"]


@posix_only
def test_a_temporary_left_by_a_killed_save_is_removed_by_the_next_run(tmp_path):
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} 1:{i % 3} 2:{i % 2}\n" for i in range(20)))
    model = tmp_path / "m.npz"
    assert _kill_during_save(tmp_path, data, model, signal.SIGKILL) == -signal.SIGKILL
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".m.npz.")]
    assert len(left) == 1 and not model.exists()
    from perceptrons.cli import main

    assert main(["train", str(data), "-o", str(model), "--quiet"]) == 0
    assert names(tmp_path) == ["d.svm", "m.npz"]


@pytest.mark.parametrize("length", [230, 250, 255])
def test_a_name_as_long_as_the_directory_allows_is_written(tmp_path, length):
    """The temporary name beside the target is longer than the target's: it is cut to
    the directory's limit (a digest keeps the targets apart), and stale ones of a long
    name are still found."""
    if os.pathconf(tmp_path, "PC_NAME_MAX") < length:
        pytest.skip("a file system with shorter names")
    target = tmp_path / ("m" * (length - 4) + ".npz")
    check_output_path(target)
    write_text_atomically(target, "model")
    assert target.read_text() == "model"
    assert os.listdir(tmp_path) == [target.name]
    # Two long names that differ only at their end have different temporary names.
    other = tmp_path / ("m" * (length - 4) + ".npy")
    assert files_module._temporary_stem(target) != files_module._temporary_stem(other)
    # A temporary file a dead process left for the long name is found and removed.
    done = subprocess.run(
        [sys.executable, "-c", "print(__import__('os').getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    stale = tmp_path / f".{files_module._temporary_stem(target)}.{int(done.stdout)}.abcd1234.tmp"
    stale.write_text("partial")
    assert remove_stale_temporaries(target) == [stale]
    write_text_atomically(target, "again")
    assert os.listdir(tmp_path) == [target.name]
