"""How to keep a running server's weights safe: load time and memory of the choices (not part of the tests).

A random model with bert-base-uncased's exact configuration is saved to a temporary folder, then
loaded by two "replicas" (child processes, one after the other, both kept alive) in each way:

* ``mmap``: transformers' default, straight from the user's folder (an overwrite kills the server: SIGBUS);
* ``anonymous``: ``disable_mmap=True`` — the weights are read into each process's private memory;
* ``snapshot-shm`` / ``snapshot-disk``: ``bertlens.snapshot`` copies the folder once into a private
  read-only snapshot on tmpfs (/dev/shm) or in a cache directory on disk, and every replica maps it.

For each it prints the load time (median of 3 rounds) of the first replica (which makes the snapshot)
and of the second, and, from /proc/PID/smaps_rollup after one forward pass, each replica's RSS and
PSS (shared pages divided between the processes mapping them).
Run: ``python -m scripts.weights_memory`` (a few minutes; the page cache is warm for every choice).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bertlens.snapshot import remove_snapshot
from bertlens.synthetic import random_bert_config, save_random_bert

ROOT = Path(__file__).resolve().parents[1]
CHOICES = ("mmap", "anonymous", "snapshot-shm", "snapshot-disk")
ROUNDS = 3

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


# One round's load seconds of the first and second replica, the first's memory alone, and both together's.
Round = tuple[float, float, dict[str, float], list[dict[str, float]]]


def start_replica(choice: str, folder: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], float]:
    child = subprocess.Popen(
        [sys.executable, "-c", REPLICA, choice, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert child.stdout is not None  # stdout=PIPE
    return child, float(child.stdout.readline())


def measure(choice: str, folder: Path, scratch: Path) -> Round:
    """One round: two replicas started one after the other; their load times and memory."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BERTLENS_SNAPSHOT_DIR": str(scratch / "snapshots")}
    first, first_seconds = start_replica(choice, folder, env)
    alone = memory_mib(first.pid)
    second, second_seconds = start_replica(choice, folder, env)
    together = [memory_mib(first.pid), memory_mib(second.pid)]
    for child in (first, second):
        assert child.stdin is not None  # stdin=PIPE
        child.stdin.close()
        child.wait()
    return first_seconds, second_seconds, alone, together


def report(choice: str, rounds: list[Round]) -> None:
    """Median load times over the rounds; memory of the last round (it hardly varies)."""
    first_seconds = statistics.median(r[0] for r in rounds)
    second_seconds = statistics.median(r[1] for r in rounds)
    _, _, alone, together = rounds[-1]
    print(
        f"| {choice} | {first_seconds:.2f} s | {second_seconds:.2f} s | {alone['Rss']:.0f} | {alone['Pss']:.0f} "
        f"(anon {alone['Pss_Anon']:.0f}, file {alone['Pss_File']:.0f}, shmem {alone['Pss_Shmem']:.0f}) "
        f"| {together[0]['Pss']:.0f} + {together[1]['Pss']:.0f} = {together[0]['Pss'] + together[1]['Pss']:.0f} |",
        flush=True,
    )


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = save_random_bert(Path(scratch) / "bert-base-random", random_bert_config())
        size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
        print(f"bert-base-sized random model: {size:.0f} MiB on disk\n")
        print(
            "| choice | load (1st replica) | load (2nd replica) | RSS MiB (1 replica) | PSS MiB (1 replica) | PSS MiB, 2 replicas |"
        )
        print("| --- | --- | --- | --- | --- | --- |")
        with tempfile.TemporaryDirectory(dir="/dev/shm") as tmpfs:
            rounds: dict[str, list[Round]] = {choice: [] for choice in CHOICES}
            for _ in range(ROUNDS):  # interleaved, so load on the shared machine hits every choice alike
                for choice in CHOICES:
                    place = Path(tmpfs if choice == "snapshot-shm" else scratch)
                    rounds[choice].append(measure(choice, folder, place))
                    if (place / "snapshots").exists():  # every round's first replica makes the snapshot
                        remove_snapshot(place / "snapshots")
            for choice in CHOICES:
                report(choice, rounds[choice])


if __name__ == "__main__":
    main()
