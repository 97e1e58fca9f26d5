"""Private, read-only snapshots of model folders, so a running server's weights cannot be yanked away.

transformers memory-maps ``model.safetensors``: overwriting or truncating that file while the server
runs makes the next forward pass touch pages that no longer exist, and the kernel kills the whole
server with SIGBUS (no Python error, no log line). BERT Lens therefore loads a user's model folder
from a snapshot copy that nobody else writes to:

* keyed by the folder's path and every copied file's identity (device, inode, size, mtime, ctime —
  ctime changes on every write and cannot be set back), so an unchanged folder maps to the same
  snapshot and a changed one to a new snapshot;
* read-only files in a directory only this user can enter, published with one atomic rename, so
  replicas of the app on one host share the snapshot and therefore the weights' memory (page cache);
* in the user's cache directory (``~/.cache/bertlens/snapshots``; ``BERTLENS_SNAPSHOT_DIR`` chooses
  another place). On disk, not on tmpfs: page-cache pages of a disk file can be dropped under memory
  pressure and read again, while a tmpfs copy pins its RAM until deleted (and Docker's /dev/shm is
  64 MB by default). Measured in ``scripts/weights_memory.py``.

A snapshot superseded by a newer one of the same folder, or whose folder is gone, is deleted when the
next snapshot is made: a process still running on it keeps its pages (an unlinked file stays mapped).
Hugging Face cache blobs need none of this: a download writes a new file and renames it into place,
never through an existing blob (huggingface_hub ``_download_to_tmp_and_move``). Nor does the bundled
encoder: pip unlinks an installed file before writing its replacement, for this very reason
(``pip/_internal/operations/install/wheel.py``), so a running process keeps the old pages.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

SNAPSHOT_DIR_ENV = "BERTLENS_SNAPSHOT_DIR"
SOURCE_FILE = ".source"  # inside each snapshot: the folder it copies (for clean-up)
FREE_SPACE_MARGIN_BYTES = 256 * 2**20  # leave the snapshot's file system this much room after the copy
STALE_TEMP_SECONDS = 600  # an unfinished copy older than this was abandoned by a dead process

log = logging.getLogger("bertlens")


class FolderChanged(Exception):
    """The folder kept changing while it was being copied (someone is writing to it)."""


def loadable_files(folder: Path) -> list[Path]:
    """The files transformers reads to load a BERT from ``folder``: configs, tokenizer files, weights.

    ``pytorch_model*.bin`` only when there are no safetensors (transformers then ignores it).
    Other large files a training folder may hold (optimizer states, TF/Flax weights) are left out.
    """
    files = [p for p in sorted(folder.iterdir()) if p.is_file() and not p.name.startswith(".")]
    wanted = [p for p in files if p.suffix in {".json", ".txt", ".model", ".safetensors"}]
    if not any(p.suffix == ".safetensors" for p in wanted):
        wanted += [p for p in files if p.name.startswith("pytorch_model") and p.suffix == ".bin"]
    return wanted


# A copied file's name, device, inode, size, mtime (ns) and ctime (ns).
FileIdentity = tuple[str, int, int, int, int, int]


def _identity(files: list[Path]) -> list[FileIdentity]:
    return [(p.name, s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns) for p in files for s in [p.stat()]]


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


def _private_dir(path: Path) -> Path | None:
    """``path`` created (mode 0700) or checked to be this user's alone; None if it cannot be."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.lstat()
    except OSError:
        return None
    mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077
    return path if mine else None


def snapshot_root() -> Path:
    """Where snapshots live: ``BERTLENS_SNAPSHOT_DIR``, else ``bertlens/snapshots`` in the user's cache directory."""
    configured = os.environ.get(SNAPSHOT_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bertlens" / "snapshots"


def remove_snapshot(path: Path) -> None:
    """Delete a snapshot (its directory and files are read-only)."""
    for directory in (path, *[p for p in path.rglob("*") if p.is_dir()]):
        directory.chmod(0o700)
    shutil.rmtree(path, ignore_errors=True)


def _clean_up(root: Path, folder: Path, keep: Path) -> None:
    """Drop snapshots superseded by ``keep`` or whose folder is gone, and abandoned copies."""
    for entry in root.iterdir():
        if entry == keep:
            continue
        try:
            if entry.name.startswith(".tmp-"):
                if time.time() - entry.stat().st_mtime > STALE_TEMP_SECONDS:
                    remove_snapshot(entry)
                continue
            source = Path((entry / SOURCE_FILE).read_text())
            if source == folder or not source.is_dir():
                remove_snapshot(entry)
        except OSError:
            continue  # another process is removing it, or it is not ours to read


def _publish_copy(files: list[Path], identity: list[FileIdentity], folder: Path, target: Path) -> bool:
    """Copy ``files`` next to ``target``, make them read-only and rename the copy to ``target`` at once.

    False when the folder was written to during the copy (the copy may be torn and is dropped).
    """
    if shutil.disk_usage(target.parent).free < sum(item[3] for item in identity) + FREE_SPACE_MARGIN_BYTES:
        raise OSError(errno.ENOSPC, f"No room for a snapshot of {folder}", str(target.parent))
    temporary = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
        for file in files:
            shutil.copyfile(file, temporary / file.name)
            (temporary / file.name).chmod(0o444)
        (temporary / SOURCE_FILE).write_text(str(folder))
        if _identity(files) != identity:
            remove_snapshot(temporary)
            return False
        temporary.chmod(0o500)
        temporary.rename(target)
        log.info("Snapshot of %s at %s", folder, target)
    except BaseException:
        remove_snapshot(temporary)
        if not target.is_dir():  # else another replica published the same snapshot first: use theirs
            raise
    return True


def snapshot_folder(folder: str | Path, attempts: int = 3) -> Path:
    """A read-only snapshot of ``folder``'s loadable files (made now, or shared from an earlier load).

    Raises FolderChanged when the folder is written to during each of ``attempts`` copies, and
    OSError when no private snapshot can be made (the caller then copies the weights into memory).
    """
    folder = Path(folder).expanduser().resolve()
    root = _private_dir(snapshot_root())
    if root is None:
        raise PermissionError(
            f"'{snapshot_root()}' cannot be made a private snapshot directory (mode 0700, this user's)."
        )
    for _ in range(attempts):
        files = loadable_files(folder)
        identity = _identity(files)
        target = root / f"{_digest(str(folder))}-{_digest(identity)}"
        if target.is_dir() or _publish_copy(files, identity, folder, target):
            _clean_up(root, folder, keep=target)
            return target
    raise FolderChanged(f"'{folder}' kept changing while it was being read; try again once it is written.")
