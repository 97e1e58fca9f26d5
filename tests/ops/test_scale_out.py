"""Past one server: replicas behind HAProxy (scripts/serve.py, deploy/).

The shipped HAProxy template renders to a config HAProxy accepts; the Compose and Kubernetes recipes
parse and name what the balancer and the probes rely on. Then ``python -m scripts.serve`` itself
(2 replicas, the tiny model): each replica's model is loaded before the link is printed (readiness, not
liveness), cookie affinity holds for HTTP and the websocket upgrade, a SIGKILLed replica's students are
served by the other one at once and the replica comes back, SIGHUP restarts every replica with no
failed request, and SIGTERM leaves no process behind. The replicas are forked from one preloaded
launcher (scripts/preloaded.py) and share its imported pages.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import websockets
import yaml
from streamlit import config as streamlit_config

from bertlens.settings import FORWARDED_FOR_ENV_VAR
from scripts.class_load import DEFAULT_CAP, Options
from scripts.class_reference import Reference
from scripts.scale_benchmark import Kill, class_table, run_class
from scripts.serve import HAPROXY, READY_PATH, ROOT, TEMPLATE, Balancer, Cluster, main, render_config, stop_group
from scripts.server import free_port, model_loads
from scripts.streamlit_client import run_to_end

DEPLOY = ROOT / "deploy"
HEALTH = "/_stcore/health"
COOKIE = "BERTLENS_REPLICA"
RESTART_DELAY = 4  # seconds: serve.py's --restart-delay in these tests
SCRIPT_CHECK_ENV = streamlit_config.get_config_options()["server.scriptHealthCheckEnabled"].env_var

pytestmark = pytest.mark.skipif(not Path(HAPROXY).exists(), reason="HAProxy is not installed (apt-get install haproxy)")


def haproxy_check(text: str, tmp_path: Path) -> subprocess.CompletedProcess:
    path = tmp_path / "haproxy.cfg"
    path.write_text(text)
    return subprocess.run([HAPROXY, "-c", "-f", str(path)], capture_output=True, text=True)


# --- the config and the recipes ------------------------------------------------------------------


def test_rendered_config_is_valid_and_says_what_the_class_needs(tmp_path):
    text = render_config(
        "127.0.0.1:8501", ["127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003"], str(tmp_path / "a.sock")
    )
    checked = haproxy_check(text, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "{{" not in text
    for line in ("server r1 127.0.0.1:9001 cookie r1", "server r3 127.0.0.1:9003 cookie r3",
                 f"cookie {COOKIE} insert indirect nocache", f"http-check send meth GET uri {READY_PATH}",
                 "timeout tunnel 1h", "http-response set-header X-BertLens-Replica %[srv_name]", "balance leastconn",
                 "compression algo gzip",
                 "http-request set-header X-Forwarded-For %[src]"):  # fmt: skip
        assert line in text, line
    assert re.search(r"default-server .*\bcheck\b.*\bmaxconn \d+", text)
    assert "balance source" not in text  # never by client IP: a classroom is one NAT address


def test_serves_replicas_read_a_clients_address_from_the_header_its_haproxy_sets(tmp_path):
    cluster = Cluster(2, free_port(), tmp_path, "127.0.0.1", {}, preload=False)
    assert cluster.replica_env()[FORWARDED_FOR_ENV_VAR] == "1"
    operator = Cluster(2, free_port(), tmp_path, "127.0.0.1", {FORWARDED_FOR_ENV_VAR: "0"}, preload=False)
    assert operator.replica_env()[FORWARDED_FOR_ENV_VAR] == "0"  # an operator's own setting wins


def test_template_addresses_are_its_only_placeholders():
    placeholders = re.findall(r"\{\{(\w+)\}\}", TEMPLATE.read_text())
    assert sorted(placeholders) == ["ADMIN_SOCKET", "BIND", "SERVERS"]
    with pytest.raises(ValueError):
        render_config(":8501", ["a:1"], "/tmp/s", template="global\n")


def test_compose_runs_the_same_config_through_the_same_renderer(tmp_path, capsys):
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    replicas = [name for name in services if re.fullmatch(r"app\d+", name)]
    assert len(replicas) >= 2
    for name in replicas:
        service = services[name]
        assert (
            service["build"]["dockerfile"] == "Dockerfile"
            and (DEPLOY / service["build"]["context"] / "Dockerfile").exists()
        )
        assert service["environment"][SCRIPT_CHECK_ENV] == "true"
        assert service["environment"][FORWARDED_FOR_ENV_VAR] == "1"  # haproxy sets the header: a client's address
        assert READY_PATH in " ".join(service["healthcheck"]["test"])
    # One PostgreSQL for every replica's live classes, up before them.
    postgres = services["postgres"]
    assert postgres["image"].startswith("postgres:") and "pg_isready" in postgres["healthcheck"]["test"]
    database = postgres["environment"]["POSTGRES_DB"]
    for name in replicas:
        url = services[name]["environment"]["BERTLENS_CLASS_STORE"]
        assert url.startswith("postgresql://") and url.endswith(f"@postgres:5432/{database}"), url
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
    haproxy = services["haproxy"]
    assert haproxy["image"].startswith("haproxy:")
    assert haproxy["ports"] == ["8501:8501"]
    assert all(haproxy["depends_on"][name]["condition"] == "service_healthy" for name in replicas)
    assert haproxy["depends_on"]["haproxy-config"]["condition"] == "service_completed_successfully"
    # The renderer's command, run here: the servers it names are the replica services.
    command = shlex.split(services["haproxy-config"]["command"][-1].split(">")[0])
    assert command[:4] == ["python", "-m", "scripts.serve", "--render"]
    assert main(command[3:]) == 0
    rendered = capsys.readouterr().out
    assert [m for m in re.findall(r"server r\d+ (\S+):8501", rendered)] == replicas
    # Resolvable stand-ins for the service names, then HAProxy's own check.
    local = re.sub(r"app(\d+):8501", lambda m: f"127.0.0.1:{9000 + int(m.group(1))}", rendered)
    checked = haproxy_check(local.replace("/tmp/haproxy.sock", str(tmp_path / "a.sock")), tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_kubernetes_probes_service_and_cookie_affinity():
    (deployment,) = yaml.safe_load_all((DEPLOY / "kubernetes" / "deployment.yaml").read_text())
    (service,) = yaml.safe_load_all((DEPLOY / "kubernetes" / "service.yaml").read_text())
    (ingress,) = yaml.safe_load_all((DEPLOY / "kubernetes" / "ingress.yaml").read_text())
    assert deployment["kind"] == "Deployment" and deployment["spec"]["replicas"] >= 2
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == labels
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert {"name": SCRIPT_CHECK_ENV, "value": "true"} in container["env"]
    port = container["ports"][0]
    assert port["containerPort"] == 8501
    # Ready (and started) only when app.py ran, model loaded; alive when the server answers at all.
    assert container["startupProbe"]["httpGet"]["path"] == READY_PATH
    assert container["readinessProbe"]["httpGet"]["path"] == READY_PATH
    assert container["livenessProbe"]["httpGet"]["path"] == HEALTH
    assert container["startupProbe"]["timeoutSeconds"] > 60  # Streamlit's own script-check limit
    (secret,) = yaml.safe_load_all((DEPLOY / "kubernetes" / "class-store-secret.yaml").read_text())
    store = next(v for v in container["env"] if v["name"] == "BERTLENS_CLASS_STORE")["valueFrom"]["secretKeyRef"]
    assert secret["kind"] == "Secret" and store["name"] == secret["metadata"]["name"]
    assert secret["stringData"][store["key"]].startswith("postgresql://")
    assert service["kind"] == "Service" and service["spec"]["selector"] == labels
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert annotations["nginx.ingress.kubernetes.io/session-cookie-name"] == COOKIE
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert (
        backend["name"] == service["metadata"]["name"]
        and backend["port"]["name"] == service["spec"]["ports"][0]["name"]
    )


def test_ci_installs_haproxy_like_chromium():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"apt-get install -y -qq [^\n]*\bhaproxy\b", ci)


# --- serve.py, for real ------------------------------------------------------------------------


class Served:
    """``python -m scripts.serve`` running in a subprocess (in the repository root), its output collected."""

    def __init__(self, model: Path, workdir: Path, replicas: int = 2):
        self.workdir, self.port = workdir, free_port()
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        env.pop("BERTLENS_HOSTED", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "scripts.serve", "--replicas", str(replicas), "--port", str(self.port),
             "--address", "127.0.0.1", "--model", str(model), "--workdir", str(workdir),
             "--restart-delay", str(RESTART_DELAY)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)  # fmt: skip
        self.lines: list[str] = []
        self.read_at: list[float] = []  # when each line came (time.monotonic)
        self.up = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.up.wait(180):
            self.process.kill()
            raise RuntimeError("serve.py did not come up:\n" + "".join(self.lines))
        self.loads_when_up = {r["name"]: len(model_loads(Path(r["log"]))) for r in self.state()["replicas"]}

    def _read(self) -> None:
        for line in self.process.stdout:
            self.read_at.append(time.monotonic())
            self.lines.append(line)
            if "is up" in line:
                self.up.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def when(self, text: str, seconds: float) -> float:
        """When the first line holding ``text`` came, waiting up to ``seconds`` for it."""
        wait_until(lambda: any(text in line for line in self.lines), seconds, f"serve.py says {text!r}")
        return next(at for at, line in zip(self.read_at, self.lines) if text in line)

    def state(self) -> dict:
        return json.loads((self.workdir / "state.json").read_text())

    def pids(self) -> dict[str, int]:
        return {r["name"]: r["pid"] for r in self.state()["replicas"]}

    def balancer(self) -> dict[str, str]:
        return Balancer(self.workdir / "haproxy.sock").states()


def get(url: str, cookie: str | None = None) -> tuple[int, str | None, str]:
    """(status, X-BertLens-Replica, Set-Cookie) of one GET."""
    request = urllib.request.Request(url, headers={"Cookie": f"{COOKIE}={cookie}"} if cookie else {})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.headers.get("X-BertLens-Replica"), response.headers.get("Set-Cookie") or ""


def websocket_replica(url: str, cookie: str) -> str | None:
    """The replica that answers a websocket upgrade carrying the affinity cookie (as a browser sends it)."""

    async def handshake() -> str | None:
        address = url.replace("http://", "ws://") + "/_stcore/stream"
        async with websockets.connect(address, subprotocols=["streamlit"],
                                      additional_headers={"Cookie": f"{COOKIE}={cookie}"}) as websocket:  # fmt: skip
            return websocket.response.headers.get("X-BertLens-Replica")

    return run_to_end(handshake())


def wait_until(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.2)
    raise AssertionError(f"not within {seconds:.0f} s: {what}")


def group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.fixture(scope="module")
def served(tiny_pretraining_dir, tmp_path_factory):
    running = Served(tiny_pretraining_dir, tmp_path_factory.mktemp("serve"))
    yield running
    if running.process.poll() is None:
        running.process.terminate()
        running.process.wait(30)


def test_each_replica_loads_its_model_before_the_link_is_printed(served):
    assert served.loads_when_up == {"r1": 1, "r2": 1}  # readiness ran app.py: no student waits for a load
    assert served.balancer() == {"r1": "UP", "r2": "UP"}


def test_replicas_are_forked_from_one_preloaded_launcher_and_share_its_pages(served):
    """scripts/preloaded.py: each replica is a child of the launcher that imported torch, transformers and
    Streamlit once, and still shares those pages with it (copy-on-write): memory counted once, not per replica."""
    state = served.state()
    for replica in state["replicas"]:
        parent = int(Path(f"/proc/{replica['pid']}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert parent == state["launcher_pid"]
        rollup = dict(
            line.split(":", 1) for line in Path(f"/proc/{replica['pid']}/smaps_rollup").read_text().splitlines()[1:]
        )
        shared_kib = int(rollup["Shared_Dirty"].split()[0])  # written before the fork (the imports), shared since
        assert shared_kib >= 150 * 1024, rollup


def test_cookie_affinity_for_pages_and_the_websocket_upgrade(served):
    first = {get(served.url + "/")[1] for _ in range(4)}
    assert first == {"r1", "r2"}  # new visitors are spread
    status, replica, cookie = get(served.url + "/tokenizer")
    assert status == 200 and f"{COOKIE}={replica}" in cookie  # the page pins the browser to who served it
    for name in ("r1", "r2"):
        assert {get(served.url + path, name)[1] for path in ("/", HEALTH, "/attention")} == {name}
        assert websocket_replica(served.url, name) == name


def test_the_balancer_compresses_what_streamlit_sends_uncompressed(served):
    """Streamlit serves its JavaScript uncompressed; through HAProxy a browser gets it gzipped (about half the
    bytes, for a whole class arriving on one network), and unchanged once unpacked."""
    page = urllib.request.urlopen(served.url + "/", timeout=30).read().decode()
    script = re.search(r'src="\./(static/js/index\.[^"]+\.js)"', page).group(1)
    headers = {"Accept-Encoding": "gzip"}
    replica = served.state()["replicas"][0]
    with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{replica['port']}/{script}", headers=headers),
                                timeout=30) as straight:  # fmt: skip
        assert straight.headers.get("Content-Encoding") is None
        plain = straight.read()
    with urllib.request.urlopen(
        urllib.request.Request(f"{served.url}/{script}", headers=headers), timeout=30
    ) as balanced:
        assert balanced.headers.get("Content-Encoding") == "gzip"
        packed = balanced.read()
    assert gzip.decompress(packed) == plain
    assert len(packed) < 0.6 * len(plain)


def test_killed_replica_is_left_at_once_and_comes_back_once_its_students_moved(served):
    before = served.pids()
    os.kill(before["r1"], signal.SIGKILL)
    status, replica, cookie = get(served.url + "/", "r1")  # r1's student, right after the kill
    assert (status, replica) == (200, "r2") and f"{COOKIE}=r2" in cookie  # re-pinned to the live replica
    # Not started again at once: r2 serves r1's students meanwhile (serve.py's --restart-delay).
    found_dead = served.when("r1 exited", 10)
    assert served.when("r1: restarting", 30) - found_dead >= RESTART_DELAY - 0.2
    wait_until(lambda: served.pids()["r1"] != before["r1"], 30, "serve.py restarts r1")
    wait_until(lambda: served.balancer() == {"r1": "UP", "r2": "UP"}, 60, "r1 back in HAProxy")
    assert get(served.url + "/", "r1")[1] == "r1"
    assert served.pids()["r2"] == before["r2"]


def test_sighup_restarts_every_replica_without_a_failed_request(served):
    before = served.pids()
    failures: list[str] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            for cookie in ("r1", "r2"):
                try:
                    status = get(served.url + HEALTH, cookie)[0]
                    if status != 200:
                        failures.append(f"{cookie}: {status}")
                except OSError as error:
                    failures.append(f"{cookie}: {error}")
            time.sleep(0.05)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        served.process.send_signal(signal.SIGHUP)
        wait_until(lambda: all(served.pids()[n] != before[n] for n in before), 120, "every replica restarted")
        wait_until(lambda: served.balancer() == {"r1": "UP", "r2": "UP"}, 60, "all back up")
    finally:
        done.set()
        poller.join()
    assert failures == []
    assert {"rolling restart: r1\n", "rolling restart: r2\n"} <= set(served.lines)


def test_sigterm_stops_everything(served):
    state = served.state()
    groups = [state["haproxy_pid"], state["launcher_pid"], *(r["pid"] for r in state["replicas"])]
    assert all(group_alive(pid) for pid in groups)
    assert Path(f"/proc/{state['postgres_pid']}").exists()  # the live classes' PostgreSQL, started by serve.py
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(30) == 0
    assert [pid for pid in groups if group_alive(pid)] == []  # no orphans: every process group is gone
    assert not Path(f"/proc/{state['postgres_pid']}").exists()
    with pytest.raises(OSError):
        get(served.url + HEALTH)


def test_class_through_the_balancer_survives_a_killed_replica(tiny_pretraining_dir, tmp_path):
    """scripts/scale_benchmark.py, small: 6 students x 4 inputs and one in the Padding lab through HAProxy on
    2 replicas; the replica serving the Padding lab is SIGKILLed once 15 runs are done (and replaced 20 s later,
    if the class still runs)."""
    model = str(tiny_pretraining_dir)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "BERTLENS_MODEL": model}
    env.pop("BERTLENS_HOSTED", None)
    sessions, lab = 6, 6  # the Padding-lab student's number comes after the others'
    result = run_class(model, 2, Options(sessions=sessions, inputs=4, max_seconds=100, padding_limit=40), tmp_path,
                       env, Reference(model, DEFAULT_CAP), Kill(after_runs=15, of_session=lab))  # fmt: skip
    print("\n" + class_table([result]))
    summary = result.summary
    assert summary.finished_in_time
    assert set(result.sessions_per_replica) == {"r1", "r2"}  # students were spread over both replicas
    assert result.killed in ("r1", "r2") and result.affected >= 1
    assert result.restored == result.affected  # every student of the dead replica got their view back
    assert lab in result.restored_sessions  # the Padding lab too, its reopened batch checked like every run
    assert max(result.restore_seconds) <= 15
    assert result.other_errors == 0  # nobody else noticed
    assert summary.wrong == 0, summary.examples  # restored views included: every number checked
    # The only errors are the runs the kill interrupted: one per affected student.
    interrupted = [e for e in summary.examples if "ConnectionClosed" in e]
    assert summary.errors == result.affected and len(interrupted) == min(summary.errors, 5), summary.examples


def test_a_replica_whose_port_was_taken_starts_on_another(tiny_pretraining_dir, tmp_path):
    """Replica ports are probed when the cluster is made and bound when each replica starts; one taken in between
    (another test worker, an outgoing connection) gets another port before HAProxy's config names them."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "BERTLENS_MODEL": str(tiny_pretraining_dir)}
    env.pop("BERTLENS_HOSTED", None)
    cluster = Cluster(1, free_port(), tmp_path, "127.0.0.1", env, preload=False)
    (replica,) = cluster.members
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))  # bound, not listening: as an outgoing connection's port
        replica.port = busy = taken.getsockname()[1]
        cluster.start_replica(replica)
        try:
            cluster.wait_ready_on_a_free_port(replica)
            assert replica.port != busy and replica.alive
            assert json.loads((tmp_path / "state.json").read_text())["replicas"][0]["port"] == replica.port
        finally:
            if replica.process is not None:
                stop_group(replica.process)
