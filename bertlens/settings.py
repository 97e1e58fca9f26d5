"""Deployment settings read from the environment (also fed from Streamlit secrets by app.py).

Hosted mode (``BERTLENS_HOSTED=1``) is for public links: visitors choose only from an allowlist
of models (no custom Hub ids or folders, so nobody can make the server download arbitrary
models), and inputs are capped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from bertlens.models import BUNDLED_MODEL, DEFAULT_MODEL, MODEL_CHOICES, TRUE_WORDS, initial_model_choice

ENV_PREFIX = "BERTLENS_"


@dataclass(frozen=True)
class Settings:
    hosted: bool
    default_model: str
    model_options: tuple[str, ...]  # what the picker offers
    allow_custom_models: bool
    token_cap: int | None  # max tokens per input (None: the model's own limit)
    sentence_cap: int  # max sentences on the word-senses page


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    try:
        return max(1, int(env.get(name, default)))
    except ValueError:
        return default


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    hosted = env.get("BERTLENS_HOSTED", "").strip().lower() in TRUE_WORDS
    default_model = initial_model_choice(env)
    if hosted:
        listed = [m.strip() for m in env.get("BERTLENS_ALLOWED_MODELS", "").split(",") if m.strip()]
        options = tuple(dict.fromkeys([default_model, *(listed or [DEFAULT_MODEL, BUNDLED_MODEL])]))
    else:
        options = tuple(dict.fromkeys([default_model, *MODEL_CHOICES]))
    return Settings(
        hosted=hosted,
        default_model=default_model,
        model_options=options,
        allow_custom_models=not hosted,
        token_cap=_int(env, "BERTLENS_MAX_TOKENS", 256) if hosted else None,
        sentence_cap=_int(env, "BERTLENS_MAX_SENTENCES", 50 if hosted else 200),
    )


def env_from_secrets(table: Mapping[str, Any]) -> dict[str, str]:
    """A ``[bertlens]`` Streamlit secrets table as the environment variables it stands for.

    Keys may be short (``hosted``, ``allowed_models``, ``max_tokens``, ``max_sentences``, ``model``)
    or the variables' own names; booleans become "1"/"0" and lists comma-separated strings.
    """
    env = {}
    for key, value in table.items():
        name = key.upper() if key.upper().startswith(ENV_PREFIX) else ENV_PREFIX + key.upper()
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(item) for item in value)
        env[name] = str(value)
    return env
