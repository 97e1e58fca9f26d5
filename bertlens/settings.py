"""Deployment settings: hosted mode, the models offered, and the work budgets.

Hosted mode (``BERTLENS_HOSTED=1``) is for public links: visitors choose only from an allowlist
of models (no custom Hub ids or folders, so nobody can make the server download arbitrary
models), and the budgets (``bertlens.budgets``) take their strict hosted defaults.

Where a value comes from, first match wins:

1. an environment variable ``BERTLENS_…`` that is set and not blank (blank counts as unset, so an
   empty ``BERTLENS_HOSTED=`` cannot switch off ``hosted = true`` in secrets);
2. the ``[bertlens]`` table of Streamlit secrets (``hosted``, ``model``, ``allowed_models``,
   ``max_…``; the variables' own names work too);
3. the default (hosted: the strict budgets; local: the generous ones).

Values are parsed strictly and fail closed: a hosted switch other than the accepted spellings, a
budget that is not a whole number ≥ 1, or an unknown key in the secrets table raises
``SettingsError`` (the app shows it and serves no page) — a typo never means "public, no caps".
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from bertlens.budgets import BUDGETS, ENV_PREFIX, Budgets, budgets_from
from bertlens.engine import MAX_PASSES_ENV, REQUEST_SECONDS_ENV, engine_settings
from bertlens.models import BUNDLED_MODEL, DEFAULT_MODEL, MODEL_CHOICES, MODEL_ENV_VAR, TRUE_WORDS, initial_model_choice
from bertlens.serving import GC_FREEZE_ENV, NODELAY_ENV
from bertlens.snapshot import SNAPSHOT_DIR_ENV

HOSTED_ENV_VAR = "BERTLENS_HOSTED"
ALLOWED_ENV_VAR = "BERTLENS_ALLOWED_MODELS"
CLASS_STORE_ENV_VAR = (
    "BERTLENS_CLASS_STORE"  # the live classes' store: a SQLite file (one server) or PostgreSQL (replicas)
)
# On only behind a proxy that sets X-Forwarded-For itself, replacing any a client sent (deploy/haproxy.cfg does; so
# scripts/serve.py and deploy/compose.yaml turn it on): the live classes' limits per client address read it.
FORWARDED_FOR_ENV_VAR = "BERTLENS_TRUST_FORWARDED_FOR"
DEFAULT_CLASS_STORE = Path.home() / ".cache" / "bertlens" / "rooms.sqlite3"
SQLITE_SCHEME = "sqlite:///"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
ON_WORDS = tuple(sorted(TRUE_WORDS))  # ("1", "on", "true", "yes")
OFF_WORDS = ("0", "false", "no", "off")
KNOWN_VARIABLES = (
    HOSTED_ENV_VAR,
    MODEL_ENV_VAR,
    ALLOWED_ENV_VAR,
    CLASS_STORE_ENV_VAR,
    FORWARDED_FOR_ENV_VAR,
    *(spec.env_var for spec in BUDGETS.values()),
)
# The server's own settings: read from the environment only (the engine and the collector start before any
# session, without secrets), and checked as strictly as the rest.
SERVER_VARIABLES = (MAX_PASSES_ENV, REQUEST_SECONDS_ENV, GC_FREEZE_ENV)
# Read where they act (the snapshot folder, Nagle's switch), and by the tests and scripts: known, not settings.
OTHER_VARIABLES = (
    SNAPSHOT_DIR_ENV, NODELAY_ENV, "BERTLENS_REQUIRE_BROWSER", "BERTLENS_SCREENSHOTS", "BERTLENS_CHROMIUM", "BERTLENS_AXE",
)  # fmt: skip
WHOLE_NUMBER = re.compile(r"[0-9]+")  # ASCII digits only, as links read them: not "٣"


class SettingsError(ValueError):
    """A setting that cannot be read; the message names it and lists what is accepted."""


@dataclass(frozen=True)
class Settings:
    hosted: bool
    default_model: str
    model_options: tuple[str, ...]  # what the picker offers
    allow_custom_models: bool
    budgets: Budgets
    class_store: str  # the live classes' store, as a URL (``class_store``)
    trust_forwarded_for: bool = False  # a client's address is the last X-Forwarded-For (``trust_forwarded_for``)


def _set(env: Mapping[str, str], name: str) -> str | None:
    """The variable's value, stripped; None when unset or blank."""
    value = (env.get(name) or "").strip()
    return value or None


def _switch(env: Mapping[str, str], name: str) -> bool:
    """An on/off setting, off when unset."""
    raw = _set(env, name)
    if raw is None or raw.lower() in OFF_WORDS:
        return False
    if raw.lower() in ON_WORDS:
        return True
    raise SettingsError(
        f"{name} (secrets key '{name.removeprefix(ENV_PREFIX).lower()}') is {raw[:40]!r}. Accepted: "
        f"{', '.join(ON_WORDS)} (on) or {', '.join(OFF_WORDS)} (off), in any case; in secrets also true/false."
    )


def _budget(env: Mapping[str, str], name: str, hosted: bool) -> int | None:
    spec = BUDGETS[name]
    raw = _set(env, spec.env_var)
    if raw is None:
        return spec.hosted if hosted else spec.local
    if not WHOLE_NUMBER.fullmatch(raw) or not 1 <= int(raw) <= (spec.ceiling or int(raw)):
        accepted = f"from 1 to {spec.ceiling:,}" if spec.ceiling else "≥ 1"
        raise SettingsError(
            f"{spec.env_var} (secrets key '{spec.key}') is {raw[:40]!r}. Accepted: a whole number {accepted} "
            f"(the {unit_name(name)}; hosted default {spec.hosted:,})."
        )
    return int(raw)


def unit_name(name: str) -> str:
    return f"maximum number of {BUDGETS[name].unit}"


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Settings from one mapping of ``BERTLENS_…`` variables (see ``merged_environment``); ``SettingsError`` when malformed."""
    env = os.environ if env is None else env
    _check_server_variables(env)
    hosted = _switch(env, HOSTED_ENV_VAR)
    default_model = initial_model_choice(env)
    if hosted:
        listed = [m.strip() for m in (_set(env, ALLOWED_ENV_VAR) or "").split(",") if m.strip()]
        options = tuple(dict.fromkeys([default_model, *(listed or [DEFAULT_MODEL, BUNDLED_MODEL])]))
    else:
        options = tuple(dict.fromkeys([default_model, *MODEL_CHOICES]))
    return Settings(
        hosted=hosted,
        default_model=default_model,
        model_options=options,
        allow_custom_models=not hosted,
        budgets=budgets_from({name: _budget(env, name, hosted) for name in BUDGETS}),
        class_store=class_store(env),
        trust_forwarded_for=_switch(env, FORWARDED_FOR_ENV_VAR),
    )


def class_store(env: Mapping[str, str]) -> str:
    """Where live classes are kept, as a URL: ``sqlite:///`` + an absolute path (given so, or as the bare absolute
    path; default: a file in the user's cache, for one server), or a ``postgresql://`` URL that every replica shares.
    Anything else fails closed: a relative path would name another file in each working folder, and a class on
    replicas with a store per replica would lose its students at every failover."""
    raw = _set(env, CLASS_STORE_ENV_VAR)
    if raw is None:
        return f"{SQLITE_SCHEME}{DEFAULT_CLASS_STORE}"
    if raw.startswith(POSTGRES_SCHEMES):
        return raw
    path = raw.removeprefix(SQLITE_SCHEME)
    if "://" not in path and Path(path).is_absolute() and not path.endswith("/"):
        return f"{SQLITE_SCHEME}{path}"
    shown = f"{raw.split('://', 1)[0]}://…" if "://" in raw else raw[:40]  # a URL may carry a password: its scheme only
    raise SettingsError(
        f"{CLASS_STORE_ENV_VAR} (secrets key 'class_store') is {shown!r}. Accepted: an absolute file path, or "
        "sqlite:/// followed by one (SQLite: one server), or a postgresql:// URL (replicas: every one the same "
        "database)."
    )


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """The ``BERTLENS_…`` variables BERT Lens does not read (a misspelt ``BERTLENS_MAX_TOKEN``), each with the name
    it is closest to, if any: for the server's log, since an unread variable changes nothing."""
    known = (*KNOWN_VARIABLES, *SERVER_VARIABLES, *OTHER_VARIABLES)
    unknown = []
    for name in sorted(n for n in env if n.upper().startswith(ENV_PREFIX) and n not in known):
        meant = get_close_matches(name.upper(), known, n=1, cutoff=0.8)
        unknown.append(f"{name} (did you mean {meant[0]}?)" if meant else name)
    return unknown


def _check_server_variables(env: Mapping[str, str]) -> None:
    try:
        engine_settings(env)
    except ValueError as error:
        raise SettingsError(str(error)) from None
    if (freeze := _set(env, GC_FREEZE_ENV)) not in (None, "0", "1"):
        raise SettingsError(
            f"{GC_FREEZE_ENV} is {freeze[:40]!r}. Accepted: 0 (off, to measure what it saves) or 1 (on)."
        )


SECRETS_TABLE = "bertlens"


def secrets_table(secrets: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``[bertlens]`` table of Streamlit's secrets, {} without one. A table spelt otherwise (``[BertLens]``) or a
    ``bertlens`` that is not a table is a ``SettingsError``: read as no table, it left a public server in local mode."""
    for key in secrets:
        if key != SECRETS_TABLE and key.strip().lower() == SECRETS_TABLE:
            raise SettingsError(
                f"The secrets have a [{key[:40]}] table: BERT Lens reads [{SECRETS_TABLE}] (lower case)."
            )
    table = secrets.get(SECRETS_TABLE, {})
    if not isinstance(table, Mapping):
        raise SettingsError(
            f"{SECRETS_TABLE} in the secrets is a value, not a table: write [{SECRETS_TABLE}] above its keys."
        )
    return table


def env_from_secrets(table: Mapping[str, Any]) -> dict[str, str]:
    """A ``[bertlens]`` Streamlit secrets table as the environment variables it stands for.

    Keys may be short (``hosted``, ``allowed_models``, ``max_tokens``, ``model``, …) or the
    variables' own names; booleans become "1"/"0" and lists comma-separated strings. An unknown
    key is a ``SettingsError`` (a misspelt ``hosted`` must not leave a public server open).
    """
    env = {}
    for key, value in table.items():
        name = key.upper() if key.upper().startswith(ENV_PREFIX) else ENV_PREFIX + key.upper()
        if name in SERVER_VARIABLES:
            raise SettingsError(f"{name} is read from the environment only, not from the [bertlens] secrets table.")
        if name not in KNOWN_VARIABLES:
            known = ", ".join(v.removeprefix(ENV_PREFIX).lower() for v in KNOWN_VARIABLES)
            raise SettingsError(f"Unknown key {key[:40]!r} in the [bertlens] secrets table. Known keys: {known}.")
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(item) for item in value)
        env[name] = str(value)
    return env


def merged_environment(env: Mapping[str, str], secrets_table: Mapping[str, Any]) -> dict[str, str]:
    """Secrets, overridden by every environment variable that is set and not blank."""
    return {**env_from_secrets(secrets_table), **{name: value for name, value in env.items() if value.strip()}}
