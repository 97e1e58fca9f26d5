"""Load faults: a broken checkpoint falls back to the bundled encoder with the reason, once; weights cannot
be yanked from under a running model; a Hub that never answers cannot hang a load; Retry reloads only the
failed model, one attempt at a time.

The weight and Hub tests run their victim in a child process: a SIGBUS or a hang must fail the test,
not kill or stall the test run.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from subprocess import Popen

import pytest
import torch
from safetensors.torch import load_file, save_file
from streamlit.testing.v1 import AppTest

from bertlens import analysis as core_analysis
from bertlens import models, snapshot
from bertlens.models import BUNDLED_MODEL, LOAD_COUNTS, load_with_fallback
from bertlens.synthetic import TINY_CONFIG, random_bert_config, save_random_bert
from components.services import cache
from components.services import cache as cache_component
from components.services import models as model_component
from components.ui import model_picker
from components.ui.model_picker import WHY
from tests.conftest import APPTEST_TIMEOUT, ROOT, popover

WEIGHTS = "model.safetensors"


@pytest.fixture
def private_snapshots(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "snapshots"
    monkeypatch.setenv(snapshot.SNAPSHOT_DIR_ENV, str(root))
    return root


@pytest.fixture
def checkpoint(tiny_pretraining_dir, tmp_path, private_snapshots) -> Path:
    """A fresh copy of the tiny checkpoint (a unique folder: its own cache entries)."""
    return Path(shutil.copytree(tiny_pretraining_dir, tmp_path / f"bert-{uuid.uuid4().hex[:8]}"))


# --- Broken checkpoints: every error becomes a fallback with its reason ---------------------------------


def edit_config(folder: Path, **values) -> None:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **values}))


def break_header(folder: Path) -> None:
    data = bytearray((folder / WEIGHTS).read_bytes())
    data[8:20] = b"not json!!!!"
    (folder / WEIGHTS).write_bytes(data)


def truncate_weights(folder: Path) -> None:
    data = (folder / WEIGHTS).read_bytes()
    (folder / WEIGHTS).write_bytes(data[: len(data) // 2])


def corrupt_pytorch_bin(folder: Path) -> None:
    (folder / WEIGHTS).unlink()
    (folder / "pytorch_model.bin").write_bytes(b"PK\x03\x04 not a zip archive" * 64)


def drop_layer_weights(folder: Path) -> None:
    tensors = load_file(folder / WEIGHTS)
    save_file({k: v for k, v in tensors.items() if ".layer.1." not in k}, folder / WEIGHTS, metadata={"format": "pt"})


def shrink_vocabulary(folder: Path) -> None:
    save_random_bert(folder, random_bert_config(**TINY_CONFIG, vocab_size=1000))  # 30,522-token tokenizer


BROKEN = {
    "safetensors header": (break_header, "SafetensorError"),
    "truncated safetensors": (truncate_weights, "SafetensorError"),
    "shape mismatch": (lambda f: edit_config(f, intermediate_size=48), "does not match its config.json"),
    "config value of the wrong type": (lambda f: edit_config(f, num_hidden_layers="two"), "expected int"),
    "corrupt pytorch_model.bin": (corrupt_pytorch_bin, "PytorchStreamReader"),
    "missing encoder weights": (drop_layer_weights, "weights are missing"),
    "tokenizer beyond the embeddings": (shrink_vocabulary, "embeddings for only 1000"),
}


@pytest.mark.parametrize("fault", BROKEN)
def test_broken_checkpoint_falls_back_with_the_reason(checkpoint, bundled, fault):
    damage, reason = BROKEN[fault]
    damage(checkpoint)
    bundle = load_with_fallback(str(checkpoint), load=lambda name: bundled)
    assert bundle.name == BUNDLED_MODEL and bundle.requested == str(checkpoint)
    assert bundle.model is bundled.model and not bundle.offline
    assert reason in bundle.fallback_reason and str(checkpoint) in bundle.fallback_reason


def open_tokenizer_page(monkeypatch, model: Path | str, **env: str) -> AppTest:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", str(model))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    at = AppTest.from_file(str(ROOT / "pages/tokenizer.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params["text"] = "Hello world"
    return at.run()


def banner(at: AppTest) -> str:
    """The one-line warning and the details under "Why, and how to fix it"."""
    details = [m.value for m in popover(at, WHY).markdown] if [w for w in at.warning if "bundled" in w.value] else []
    return " ".join([*(str(w.value) for w in at.warning), *details])


def test_broken_checkpoint_is_shown_as_a_fallback_and_tried_once(checkpoint, monkeypatch):
    break_header(checkpoint)
    at = open_tokenizer_page(monkeypatch, checkpoint)
    at.run()  # another click
    assert not at.exception, at.exception
    assert "Could not load" in banner(at) and "SafetensorError" in banner(at)
    assert f"Model: `{BUNDLED_MODEL}`" in " ".join(c.value for c in at.caption)
    assert LOAD_COUNTS[str(checkpoint)] == 1  # the fallback is cached: one attempt, not one per click


# --- Weights that cannot be yanked away ---------------------------------------------------------------

# One line a case (folder, weights file, damage, snapshot place), one answer line a case: every case in one child
# process, so torch and transformers are imported once.
VICTIM = r"""
import os, sys, torch
from bertlens.models import load_model
from bertlens.snapshot import SNAPSHOT_DIR_ENV
for case in sys.stdin.read().splitlines():
    folder, weights, damage, snapshots = case.split("\t")
    os.environ[SNAPSHOT_DIR_ENV] = snapshots
    bundle = load_model(folder)
    inputs = bundle.tokenizer("The cat sat on the mat.", return_tensors="pt")
    def logits():
        with torch.no_grad():
            return bundle.model(**inputs).prediction_logits
    before = logits()
    path = os.path.join(folder, weights)
    with open(path, "r+b") as file:  # in place: same inode, as an editor or `cp` over it would
        if damage == "truncate":
            file.truncate(0)
        else:
            file.write(b"\0" * os.path.getsize(path))
    after = logits()
    print(folder, "same" if torch.equal(before, after) else "changed", sep="\t", flush=True)
"""
DAMAGES = [(weights, damage) for weights in (WEIGHTS, "pytorch_model.bin") for damage in ("truncate", "overwrite")]
NO_PRIVATE_PLACE = "no private snapshot place"


def as_pytorch_bin(folder: Path) -> None:
    torch.save(load_file(folder / WEIGHTS), folder / "pytorch_model.bin")
    (folder / WEIGHTS).unlink()


@pytest.fixture(scope="module")
def victim(tiny_pretraining_dir, tmp_path_factory) -> tuple[dict[str, str], subprocess.CompletedProcess]:
    """Each damage case on its own copy of the checkpoint, in one child process: its answer per case ("same" or
    "changed"; none if the process died, SIGBUS included) and the process."""
    root = tmp_path_factory.mktemp("victims")
    shared = root / "world-writable"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # not private: a snapshot there could be swapped by anybody
    cases = {}
    for name, weights, damage, place in [
        *((f"{weights}-{damage}", weights, damage, root / "snapshots") for weights, damage in DAMAGES),
        (NO_PRIVATE_PLACE, WEIGHTS, "truncate", shared),
    ]:
        folder = Path(shutil.copytree(tiny_pretraining_dir, root / f"bert-{uuid.uuid4().hex[:8]}"))
        if weights != WEIGHTS:
            as_pytorch_bin(folder)
        cases[str(folder)] = (name, "\t".join((str(folder), weights, damage, str(place))))
    process = subprocess.run(
        [sys.executable, "-c", VICTIM],
        input="\n".join(line for _, line in cases.values()),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"},
        cwd=ROOT,
    )
    answers = dict(line.split("\t") for line in process.stdout.splitlines() if "\t" in line)
    return {name: answers.get(folder, "") for folder, (name, _) in cases.items()}, process


def expect_same(victim: tuple[dict[str, str], subprocess.CompletedProcess], case: str) -> None:
    answers, process = victim
    # Loaded straight from the folder, truncating kills the process with SIGBUS (returncode -7) and
    # overwriting silently changes every answer.
    assert answers[case] == "same", (
        f"{case}: {answers[case] or 'no answer'}; returncode {process.returncode}: " + (process.stderr[-2000:])
    )


@pytest.mark.parametrize(("weights", "damage"), DAMAGES)
def test_overwriting_the_weights_file_cannot_touch_a_loaded_model(victim, weights, damage):
    expect_same(victim, f"{weights}-{damage}")


def test_without_a_private_snapshot_place_the_weights_are_copied_into_memory(checkpoint, tmp_path, monkeypatch, victim):
    shared = tmp_path / "world-writable"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv(snapshot.SNAPSHOT_DIR_ENV, str(shared))
    assert models.private_weights(str(checkpoint), str(checkpoint)) == (str(checkpoint), {"disable_mmap": True})
    expect_same(victim, NO_PRIVATE_PLACE)


def test_snapshots_are_shared_read_only_and_follow_the_folder(checkpoint, private_snapshots, tmp_path):
    first = snapshot.snapshot_folder(checkpoint)
    assert snapshot.snapshot_folder(checkpoint) == first  # unchanged folder: the same snapshot (replicas share it)
    assert stat.S_IMODE(private_snapshots.stat().st_mode) == 0o700
    assert not first.stat().st_mode & 0o222
    assert all(not (first / p.name).stat().st_mode & 0o222 for p in snapshot.loadable_files(checkpoint))
    edit_config(checkpoint, layer_norm_eps=1e-6)  # the user changes the model
    second = snapshot.snapshot_folder(checkpoint)
    assert second != first and not first.exists()  # superseded snapshot removed
    assert json.loads((second / "config.json").read_text())["layer_norm_eps"] == 1e-6
    other = Path(shutil.copytree(checkpoint, tmp_path / "other"))
    snapshot.snapshot_folder(other)
    shutil.rmtree(checkpoint)
    snapshot.snapshot_folder(other)  # clean-up: the deleted folder's snapshot goes
    assert not second.exists()


def test_a_snapshot_another_replica_publishes_first_is_used(checkpoint, private_snapshots, monkeypatch):
    target = snapshot.snapshot_folder(checkpoint)
    snapshot.remove_snapshot(target)
    make_temporary = tempfile.mkdtemp

    def other_replica_publishes_first(**kwargs) -> str:
        shutil.copytree(checkpoint, target)
        return make_temporary(**kwargs)

    monkeypatch.setattr(snapshot.tempfile, "mkdtemp", other_replica_publishes_first)
    assert snapshot.snapshot_folder(checkpoint) == target
    assert [p.name for p in private_snapshots.iterdir()] == [target.name]  # our copy is gone, theirs stays


def test_snapshot_copies_only_what_transformers_reads(checkpoint):
    (checkpoint / "optimizer.pt").write_bytes(b"0" * 1024)
    (checkpoint / "pytorch_model.bin").write_bytes(b"unused while safetensors exist")
    names = {p.name for p in snapshot.loadable_files(checkpoint)}
    assert WEIGHTS in names and "config.json" in names and "tokenizer.json" in names
    assert not names & {"optimizer.pt", "pytorch_model.bin"}
    (checkpoint / WEIGHTS).unlink()
    assert "pytorch_model.bin" in {p.name for p in snapshot.loadable_files(checkpoint)}


def test_a_folder_that_keeps_changing_falls_back(checkpoint, bundled, monkeypatch):
    copy = shutil.copyfile

    def copy_while_someone_writes(source, target):
        copy(source, target)
        with open(source, "ab") as file:
            file.write(b" ")

    monkeypatch.setattr(snapshot.shutil, "copyfile", copy_while_someone_writes)
    bundle = load_with_fallback(str(checkpoint), load=lambda name: bundled)
    assert bundle.is_fallback and "kept changing" in bundle.fallback_reason


# --- A Hub that accepts connections but never answers -----------------------------------------------------


@contextmanager
def silent_hubs() -> Iterator[Callable[[bool], str]]:
    """``start(answer_probe)``: an endpoint on 127.0.0.1 that accepts every connection and never answers
    (with ``answer_probe``: except ``HEAD /``, so the Hub looks up and then stalls). Returns its URL."""
    servers: list[socket.socket] = []
    held: list[socket.socket] = []

    def serve(connection: socket.socket, answer_probe: bool) -> None:
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = connection.recv(4096)
                if not chunk:
                    return
                request += chunk
            if answer_probe and request.startswith(b"HEAD / "):
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            held.append(connection.dup())  # never answered

    def start(answer_probe: bool) -> str:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        servers.append(server)

        def accept() -> None:
            while True:
                try:
                    connection, _ = server.accept()
                except OSError:
                    return
                threading.Thread(target=serve, args=(connection, answer_probe), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()
        return f"http://127.0.0.1:{server.getsockname()[1]}"

    try:
        yield start
    finally:
        for closing in [*servers, *held]:
            closing.close()


HUB_LOAD = r"""
import json, sys, time
from bertlens import models
from bertlens.models import BUNDLED_MODEL, load_model, load_with_fallback
models.HUB_CONFIG_DEADLINE_SECONDS = float(sys.argv[1])
started = time.perf_counter()
bundle = load_with_fallback("some-org/some-bert", load=lambda name: load_model(BUNDLED_MODEL))
print(json.dumps({"seconds": time.perf_counter() - started, "name": bundle.name,
                  "offline": bundle.offline, "reason": bundle.fallback_reason}))
"""


def load_from_hub(endpoint: str, home: Path, config_deadline: float = models.HUB_CONFIG_DEADLINE_SECONDS) -> Popen[str]:
    """A fresh process loading a Hub model from ``endpoint`` (``hub_result`` reads what it fell back to)."""
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}  # this load may go online
    env.update(PYTHONPATH=str(ROOT), HF_ENDPOINT=endpoint, HF_HOME=str(home / "hf-home"))
    command = [sys.executable, "-c", HUB_LOAD, str(config_deadline)]
    return Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def hub_result(child: Popen[str]) -> dict:
    try:
        out, err = child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail("the load hung on a Hub that never answers (no fallback within 120 s)")
    assert child.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def hub_fallbacks(tmp_path_factory) -> dict[str, dict]:
    """What a load fell back to from a Hub that never answers and from one that answers the probe then stalls
    (its config deadline shortened from the shipped 20 s to 4 s to test it): the two loads run side by side, as
    each mostly waits on its Hub."""
    with silent_hubs() as start:
        children = {
            "never answers": load_from_hub(start(False), tmp_path_factory.mktemp("silent")),
            "stalls": load_from_hub(start(True), tmp_path_factory.mktemp("stalling"), config_deadline=4),
        }
        return {kind: hub_result(child) for kind, child in children.items()}


def test_a_hub_that_never_answers_falls_back_within_seconds(hub_fallbacks):
    result = hub_fallbacks["never answers"]
    assert result["name"] == BUNDLED_MODEL and result["offline"]
    assert "cannot be reached" in result["reason"]
    assert result["seconds"] < 30  # measured ~6 s: the agent-registry fetch (3 s) and the HTTP probe (3 s)


def test_a_hub_that_answers_the_probe_then_stalls_falls_back_in_bounded_time(hub_fallbacks):
    result = hub_fallbacks["stalls"]
    assert result["name"] == BUNDLED_MODEL and result["offline"]
    assert "did not send the config of 'some-org/some-bert' within 4 s" in result["reason"]
    # Bound: 3 s + 3 s + the 4 s config deadline + one backoff sleep (≤ 8 s). Measured ~7 s (~23 s at 20 s).
    assert result["seconds"] < 20


# --- Retry: only the failed model, one attempt at a time ---------------------------------------------------


def test_retry_reloads_only_the_failed_model(checkpoint, tiny_pretraining_dir, tmp_path, monkeypatch):
    other = str(shutil.copytree(tiny_pretraining_dir, tmp_path / "other-model"))
    computed_vocabularies: list[int] = []
    facts = cache.vocabulary_facts
    monkeypatch.setattr(cache, "vocabulary_facts", lambda t: computed_vocabularies.append(1) or facts(t))
    other_analysis = cache.analysis(cache.Query(other, "Another user's sentence"))
    cache.vocabulary(cache.Query(other))  # another user's cached results (the model's analyses and cache_data)
    good_weights = (checkpoint / WEIGHTS).read_bytes()
    break_header(checkpoint)
    at = open_tokenizer_page(monkeypatch, checkpoint)
    assert "Could not load" in banner(at)
    bundled_loads, other_loads = LOAD_COUNTS[BUNDLED_MODEL], LOAD_COUNTS[other]

    (checkpoint / WEIGHTS).write_bytes(good_weights)  # the teacher fixes the checkpoint
    at.button(key="retry_model_load").click().run()
    assert not at.exception, at.exception
    assert not banner(at) and f"Model: `{checkpoint}`" in " ".join(c.value for c in at.caption)
    assert LOAD_COUNTS[str(checkpoint)] == 2
    # Nothing else was dropped: not the other model, not its results, not the bundled encoder.
    assert (LOAD_COUNTS[BUNDLED_MODEL], LOAD_COUNTS[other]) == (bundled_loads, other_loads)
    assert cache.analysis(cache.Query(other, "Another user's sentence")) is other_analysis
    computed = len(computed_vocabularies)
    cache.vocabulary(cache.Query(other))
    assert len(computed_vocabularies) == computed


def test_fallback_results_belong_to_the_bundled_encoder_never_to_the_requested_name(checkpoint, monkeypatch):
    text = f"Results of a fallback {uuid.uuid4().hex[:6]}"  # not cached by any other test
    analysed = []
    analyze = core_analysis.analyze
    monkeypatch.setattr(
        core_analysis, "analyze", lambda bundle, *a: analysed.append(bundle.name) or analyze(bundle, *a)
    )
    good_weights = (checkpoint / WEIGHTS).read_bytes()
    break_header(checkpoint)

    def attention_page(model: Path | str) -> AppTest:
        monkeypatch.setenv("BERTLENS_MODEL", str(model))
        monkeypatch.chdir(ROOT)
        at = AppTest.from_file(str(ROOT / "pages/attention.py"), default_timeout=APPTEST_TIMEOUT)
        at.query_params["text"] = text
        return at.run()

    fallback = attention_page(checkpoint)
    assert not fallback.exception and analysed == [BUNDLED_MODEL]
    assert not attention_page(BUNDLED_MODEL).exception
    assert analysed == [BUNDLED_MODEL]  # the bundled encoder's own page reuses the fallback's result
    (checkpoint / WEIGHTS).write_bytes(good_weights)
    monkeypatch.setenv("BERTLENS_MODEL", str(checkpoint))  # the first page's visitor retries
    fallback.button(key="retry_model_load").click().run()
    assert not fallback.exception, fallback.exception
    assert analysed == [BUNDLED_MODEL, str(checkpoint)]  # the real model's own pass, not the fallback's


def test_retry_is_one_attempt_at_a_time_and_rate_limited(checkpoint):
    break_header(checkpoint)
    name = str(checkpoint)
    assert model_component.cached_bundle(name).is_fallback
    assert 0 < cache_component.retry_load(name, min_interval=60) <= 60  # hosted: it failed just now
    assert cache_component.retry_load(name, min_interval=0) == 0  # dropped: the next run loads it again
    assert cache_component.retry_load(name, min_interval=0) == 0  # before that run: nothing more to drop
    assert LOAD_COUNTS[name] == 1
    model_component.cached_bundle(name)
    assert LOAD_COUNTS[name] == 2  # one load for both clicks
    assert cache_component.retry_load(name, min_interval=0) == 0  # local: whenever no load is under way


def test_retry_is_refused_during_a_load_and_never_stuck_after_one(checkpoint, monkeypatch):
    """A click after a load's end but before Streamlit stored its result left no record of the load, so every
    later Retry waited, for ever, for a load that never came (concurrency review). Clicks during a load are
    refused; a click at that moment is taken, and the next one still is."""
    break_header(checkpoint)
    name = str(checkpoint)
    slow, store = threading.Event(), threading.Event()
    loading, finished_not_stored = threading.Event(), threading.Event()
    real_load, real_settings = model_component.load_with_fallback, model_component.settings

    def slow_load(*args, **kwargs):
        loading.set()
        slow.wait(10)
        return real_load(*args, **kwargs)

    def settings_after_the_load():  # cached_bundle's last step before Streamlit stores its result
        finished_not_stored.set()
        store.wait(10)
        return real_settings()

    monkeypatch.setattr(model_component, "load_with_fallback", slow_load)
    monkeypatch.setattr(model_component, "settings", settings_after_the_load)
    loader = threading.Thread(target=model_component.cached_bundle, args=(name,))
    loader.start()
    assert loading.wait(10)
    assert cache_component.retry_load(name, min_interval=0) > 0  # under way: refused
    slow.set()
    assert finished_not_stored.wait(10)
    assert cache_component.retry_load(name, min_interval=0) == 0  # ended, not yet stored: taken
    store.set()
    loader.join(10)
    assert cache_component.retry_load(name, min_interval=0) == 0  # and the next click still is


def test_hosted_retry_clicks_start_one_load(checkpoint, monkeypatch):
    # A long interval, and the recorded end of the load moved back past it instead of a sleep: a 1 s interval
    # could pass during the clicks' own reruns on a busy machine, and a click meant to be refused loaded again.
    monkeypatch.setattr(model_picker, "HOSTED_RETRY_INTERVAL_SECONDS", 30.0)
    break_header(checkpoint)
    at = open_tokenizer_page(monkeypatch, checkpoint, BERTLENS_HOSTED="1")
    model_component._load_finished[str(checkpoint)] -= 30.0  # the failed load ended an interval ago
    at.button(key="retry_model_load").click().run()  # loads again (still broken)
    assert LOAD_COUNTS[str(checkpoint)] == 2
    at.button(key="retry_model_load").click().run()  # within the interval: refused, says so
    at.button(key="retry_model_load").click().run()
    assert not at.exception, at.exception
    assert LOAD_COUNTS[str(checkpoint)] == 2
    assert any("was just tried" in str(i.value) for i in at.info)
