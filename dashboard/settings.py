"""Settings from the environment, then `.streamlit/secrets.toml`, then defaults.

No `HINDSIGHT_API_URL` means the embedded default: the project starts its own Hindsight on
127.0.0.1 and keeps its data in the data directory.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import BaseModel, Field, SecretStr, field_validator

REPO_ROOT = Path(__file__).resolve().parent.parent
SECRETS_FILE = REPO_ROOT / ".streamlit" / "secrets.toml"

# setting name -> environment variable (also the key accepted in secrets.toml)
ENV_NAMES = {
    "hindsight_api_url": "HINDSIGHT_API_URL",
    "hindsight_api_key": "HINDSIGHT_API_KEY",
    "finance_bank": "RECALL_REVIEW_FINANCE_BANK",
    "support_bank": "RECALL_REVIEW_SUPPORT_BANK",
    "data_dir": "RECALL_REVIEW_DATA_DIR",
    "api_port": "RECALL_REVIEW_API_PORT",
    "pg_port": "RECALL_REVIEW_PG_PORT",
    "exceptions_file": "RECALL_REVIEW_EXCEPTIONS_FILE",
    "tickets_file": "RECALL_REVIEW_TICKETS_FILE",
    "customers_file": "RECALL_REVIEW_CUSTOMERS_FILE",
}
_DEMO = Path(__file__).resolve().parent / "demo_data"


class Settings(BaseModel):
    hindsight_api_url: str | None = None
    hindsight_api_key: SecretStr | None = None
    finance_bank: str = "recall-review-finance"
    support_bank: str = "recall-review-support"
    data_dir: Path = REPO_ROOT / ".data"
    api_port: int = Field(default=8888, ge=1024, le=65535)
    pg_port: int = Field(default=5433, ge=1024, le=65535)
    # queue and directory files the pages load (CSV or JSON); the demo files by default
    exceptions_file: Path = _DEMO / "exceptions.csv"
    tickets_file: Path = _DEMO / "tickets.csv"
    customers_file: Path = _DEMO / "customers.json"

    @field_validator("hindsight_api_url")
    @classmethod
    def _url_scheme(cls, url: str | None) -> str | None:
        if not url:
            return None
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"HINDSIGHT_API_URL must start with http:// or https://, got {url!r}")
        return url.rstrip("/")

    @property
    def embedded(self) -> bool:
        return self.hindsight_api_url is None

    @property
    def base_url(self) -> str:
        return self.hindsight_api_url or f"http://127.0.0.1:{self.api_port}"

    @property
    def api_key(self) -> str | None:
        return self.hindsight_api_key.get_secret_value() if self.hindsight_api_key else None


def _read_secrets(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    # Accept both top-level keys and a [hindsight] table.
    return {**data, **data.get("hindsight", {})} if isinstance(data.get("hindsight"), dict) else data


def load_settings(environ: dict[str, str] | None = None, secrets_file: Path = SECRETS_FILE) -> Settings:
    environ = os.environ if environ is None else environ
    secrets = _read_secrets(secrets_file)
    values: dict[str, object] = {}
    for field, env_name in ENV_NAMES.items():
        if environ.get(env_name):
            values[field] = environ[env_name]
        elif env_name in secrets:
            values[field] = secrets[env_name]
    return Settings(**values)
