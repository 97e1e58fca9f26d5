"""How to keep a running server's weights safe: load time and memory of the choices (not part of the tests).

A random model with bert-base-uncased's exact configuration is saved to a temporary folder, then
loaded by two "replicas" (child processes, one after the other, both kept alive) in each way:

* ``mmap``: transformers' default, straight from the user's folder (an overwrite kills the server: SIGBUS);
* ``anonymous``: ``disable_mmap=True`` — the weights are read into each process's private memory;
* ``snapshot-shm`` / ``snapshot-disk``: ``bertlens.snapshot`` copies the folder once into a private
  read-only snapshot on tmpfs (/dev/shm) or in a cache directory on disk, and every replica maps it.

For each it prints the load time of the first and second replica and, from /proc/PID/smaps_rollup after
one forward pass, each replica's RSS and PSS (shared pages divided between the processes mapping them).
Run: ``python scripts/weights_memory.py`` (about a minute; the page cache is warm for every choice).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CHOICES = ("mmap", "anonymous", "snapshot-shm", "snapshot-disk")

REPLICA = r"""
import sys, time, torch
from transformers import BertForPreTraining
from bertlens.snapshot import snapshot_folder
choice, folder = sys.argv[1], sys.argv[2]
started = time.perf_counter()
options = {"disable_mmap": True} if choice == "anonymous" else {}
if choice.startswith("snapshot"):
    folder = str(snapshot_folder(folder))
model = BertForPreTraining.from_pretrained(folder, attn_implementation="eager", **options).eval()
seconds = time.perf_counter() - started
with torch.no_grad():
    model(input_ids=torch.randint(1000, 2000, (1, 128)))
print(f"{seconds:.3f}", flush=True)
sys.stdin.read()  # stay alive (and mapped) until the parent has measured
"""


def memory_mib(pid: int) -> dict[str, float]:
    """RSS and PSS (and PSS's anonymous, file and shmem parts) of one process, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value = line.split(":")
        fields[key] = int(value.split()[0]) / 1024
    return {key: fields.get(key, 0.0) for key in ("Rss", "Pss", "Pss_Anon", "Pss_File", "Pss_Shmem")}


def start_replica(choice: str, folder: Path, env: dict[str, str]) -> tuple[subprocess.Popen, float]:
    child = subprocess.Popen(
        [sys.executable, "-c", REPLICA, choice, str(folder)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )
    return child, float(child.stdout.readline())


def measure(choice: str, folder: Path, scratch: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BERTLENS_SNAPSHOT_DIR": str(scratch / "snapshots")}
    first, first_seconds = start_replica(choice, folder, env)
    alone = memory_mib(first.pid)
    second, second_seconds = start_replica(choice, folder, env)
    together = [memory_mib(first.pid), memory_mib(second.pid)]
    for child in (first, second):
        child.stdin.close()
        child.wait()
    print(
        f"| {choice} | {first_seconds:.2f} s | {second_seconds:.2f} s | {alone['Rss']:.0f} | {alone['Pss']:.0f} "
        f"(anon {alone['Pss_Anon']:.0f}, file {alone['Pss_File']:.0f}, shmem {alone['Pss_Shmem']:.0f}) "
        f"| {together[0]['Pss']:.0f} + {together[1]['Pss']:.0f} = {together[0]['Pss'] + together[1]['Pss']:.0f} |",
        flush=True,
    )


def main() -> None:
    from bertlens.snapshot import remove_snapshot
    from bertlens.synthetic import random_bert_config, save_random_bert

    with tempfile.TemporaryDirectory() as scratch:
        folder = save_random_bert(Path(scratch) / "bert-base-random", random_bert_config())
        size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
        print(f"bert-base-sized random model: {size:.0f} MiB on disk\n")
        print("| choice | load (1st replica) | load (2nd replica) | RSS MiB (1 replica) | PSS MiB (1 replica) | PSS MiB, 2 replicas |")
        print("| --- | --- | --- | --- | --- | --- |")
        with tempfile.TemporaryDirectory(dir="/dev/shm") as tmpfs:
            for choice in CHOICES:
                measure(choice, folder, Path(tmpfs if choice == "snapshot-shm" else scratch))
            for place in (tmpfs, scratch):
                remove_snapshot(Path(place, "snapshots"))  # read-only: TemporaryDirectory could not delete it


if __name__ == "__main__":
    main()
