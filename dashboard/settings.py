"""Settings (pydantic-settings): the environment, then `.streamlit/secrets.toml`, then defaults.

No `HINDSIGHT_API_URL` means the embedded default: the project starts its own Hindsight on
127.0.0.1 and keeps its data in the data directory. No `RECALL_REVIEW_DATABASE_URL` means the review
store is a SQLite file in the data directory (one instance); a PostgreSQL URL lets instances share it.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import math
import re
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
SECRETS_FILE = REPO_ROOT / ".streamlit" / "secrets.toml"
_DEMO = Path(__file__).resolve().parent / "demo_data"
ORIGINS = (
    "reviewer",
    "seed",
    "agent",
    "migration",
    "vouched",
    "unknown",
)  # who wrote a memory record (trust/origin.py)
_secrets_file: ContextVar[Path] = ContextVar("secrets_file", default=SECRETS_FILE)

Role = Literal["viewer", "reviewer", "lead"]
ROLES: tuple[str, ...] = Role.__args__


def _json_setting(value: Any, problem: str) -> Any:
    """A setting given as JSON text (the environment) parsed; a table (secrets.toml) passes as it is. The message
    names the setting and never echoes the value."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise ValueError(problem) from None


class RoleMap(BaseModel):
    """Who gets which role: e-mail addresses, or `group:<name>` for a group claim of the identity provider.

    In secrets.toml: `[roles]` with `lead = [...]`, `reviewer = [...]`, `viewer = [...]`, and
    `signed_in = "reviewer"` (the role of a signed-in user listed nowhere). Without sign-in everyone gets
    RECALL_REVIEW_ROLE.
    """

    lead: list[str] = Field(default_factory=list)
    reviewer: list[str] = Field(default_factory=list)
    viewer: list[str] = Field(default_factory=list)
    signed_in: Role = "reviewer"


def is_loopback(host: str | None) -> bool:
    if not host or host == "localhost":
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


HOST_NAME = re.compile(
    r"^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$", re.IGNORECASE
)


def is_host_pattern(host: str) -> bool:
    """A host name, an IP address, or `*.` and a domain (its subdomains): what RECALL_REVIEW_ALLOWED_HOSTS may list."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return len(host) <= 253 and bool(HOST_NAME.match(host))


def signing_secret_of(configured: str) -> bytes:
    """RECALL_REVIEW_SIGNING_KEY (any string of 16 or more characters) as the HMAC key it stands for."""
    return hashlib.sha256(configured.encode()).digest()


class QueueSettings(BaseModel):
    """One queue kind's settings (RECALL_REVIEW_QUEUES, or a `[queues.<kind>]` table): the bank its decisions and
    recalls use, the file its cases come from, and the webhook told of each final decision (docs/webhooks.md).
    Unset: the kind's own defaults, no webhook."""

    model_config = {"extra": "forbid", "hide_input_in_errors": True}
    bank: str | None = Field(default=None, min_length=1, max_length=200)
    cases: Path | None = None
    webhook_url: str | None = Field(default=None, max_length=2000)
    # signs every event (HMAC-SHA256); the receiver holds the same secret
    webhook_secret: SecretStr | None = None
    # Send to a receiver on loopback or a private network (10/8, 192.168/16, fc00::/7 ...): refused otherwise, never
    # link-local, cloud metadata, multicast or unspecified addresses (delivery/webhook_target.py).
    webhook_allow_private: bool = False

    @field_validator("webhook_url")
    @classmethod
    def _webhook_scheme(cls, url: str | None) -> str | None:
        if not url:
            return None
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL with a host")
        if parts.username is not None or parts.password is not None:
            raise ValueError("must not contain credentials (user:password@); events are signed with webhook_secret")
        return url

    @field_validator("webhook_secret")
    @classmethod
    def _secret_long_enough(cls, secret: SecretStr | None) -> SecretStr | None:
        if secret is not None and not 16 <= len(secret.get_secret_value()) <= 500:
            raise ValueError("must be 16 to 500 characters")
        return secret

    @model_validator(mode="after")
    def _webhook_signed(self) -> QueueSettings:
        if self.webhook_url and not self.webhook_secret:
            raise ValueError(
                "webhook_secret is required with webhook_url (16 characters or more): every event is signed"
            )
        return self


# The kinds' variables from before RECALL_REVIEW_QUEUES, still honoured: kind -> (its bank field, its cases field).
LEGACY_QUEUE_FIELDS = {"finance": ("finance_bank", "exceptions_file"), "support": ("support_bank", "tickets_file")}
KIND_ENTRY = r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"  # "package.module:ATTRIBUTE"


def _env(name: str, default: Any = None, **kwargs: Any) -> Any:
    # The environment variable's name is also the key accepted in secrets.toml.
    return Field(default=default, validation_alias=name, **kwargs)


class Settings(BaseSettings):
    # hide_input_in_errors: an error must never echo a key or a URL with credentials back.
    model_config = SettingsConfigDict(
        populate_by_name=True, env_ignore_empty=True, extra="ignore", case_sensitive=True, hide_input_in_errors=True
    )

    hindsight_api_url: str | None = _env("HINDSIGHT_API_URL")
    hindsight_api_key: SecretStr | None = _env("HINDSIGHT_API_KEY")
    # http:// to another machine with a key sends the key in clear text: refused unless this is set.
    allow_insecure_http: bool = _env("RECALL_REVIEW_ALLOW_INSECURE_HTTP", False)
    finance_bank: str = _env("RECALL_REVIEW_FINANCE_BANK", "recall-review-finance", min_length=1, max_length=200)
    support_bank: str = _env("RECALL_REVIEW_SUPPORT_BANK", "recall-review-support", min_length=1, max_length=200)
    data_dir: Path = _env("RECALL_REVIEW_DATA_DIR", REPO_ROOT / ".data")
    api_port: int = _env("RECALL_REVIEW_API_PORT", 8888, ge=1024, le=65535)
    pg_port: int = _env("RECALL_REVIEW_PG_PORT", 5433, ge=1024, le=65535)
    # The review store: a SQLAlchemy URL (postgresql+psycopg://...) shared by every instance; None = SQLite here.
    database_url: SecretStr | None = _env("RECALL_REVIEW_DATABASE_URL")
    # Run the delivery worker as a thread of each app process (off when `python -m dashboard worker` runs instead).
    delivery_worker: bool = _env("RECALL_REVIEW_DELIVERY_WORKER", True)
    # Once a finance case opens, recall the rest of its queue in the background (J/K/N then open from the cache).
    # Off: a case is recalled when it opens, and bulk approval offers the cases recalled so far.
    prefetch_queue: bool = _env("RECALL_REVIEW_PREFETCH", True)
    # The role of everyone when sign-in is off (one trusted user on their own machine, by default).
    role: Role = _env("RECALL_REVIEW_ROLE", "lead")
    roles: RoleMap = Field(default_factory=RoleMap, validation_alias="RECALL_REVIEW_ROLES")
    # The ID token claim that lists a signed-in user's groups (`[roles]` names them as "group:<name>").
    groups_claim: str = _env("RECALL_REVIEW_GROUPS_CLAIM", "groups", min_length=1, max_length=100)
    # Without sign-in the app serves only this machine (a loopback server.address); true accepts serving anyone who
    # reaches another address, as a viewer unless RECALL_REVIEW_ROLE says otherwise.
    allow_anonymous: bool = _env("RECALL_REVIEW_ALLOW_ANONYMOUS", False)
    # The host names the pages and the API answer to (the Host a browser sends), against DNS rebinding: a page on a name
    # the operator did not choose, resolved to this server, is refused. Unset: this machine's own names when served on
    # loopback; on any other address the app does not start without it. "*.example.com" covers its subdomains.
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias="RECALL_REVIEW_ALLOWED_HOSTS"
    )
    # The largest invoice a role or a named reviewer may decide alone (a name wins over its role; no entry: no
    # limit). NoDecode: a malformed JSON reaches our validator, which names the setting, not pydantic-settings.
    approval_limits: Annotated[dict[str, float], NoDecode] = Field(
        default_factory=dict, validation_alias="RECALL_REVIEW_APPROVAL_LIMITS"
    )
    # The share of decided cases a blind second reviewer decides again (chosen by a stable hash of the case id).
    second_review_share: float = _env("RECALL_REVIEW_SECOND_REVIEW_SHARE", 0.10, ge=0, le=1)
    # Reason codes per exception type, each with its label ({"price_variance": {"PRICE_AGREED": "..."}, "default":
    # {...}}): a type with no entry takes "default", else the built-in list (finance.reasons).
    reason_codes: Annotated[dict[str, dict[str, str]], NoDecode] = Field(
        default_factory=dict, validation_alias="RECALL_REVIEW_REASON_CODES"
    )
    # The key this dashboard signs the memory records it writes with (a reviewer's decision, the demo seed): only a
    # signed decision has a reviewer's authority. Unset: a key made once and kept in the review store (every instance
    # on one store agrees); set it when instances or tools reach memory without sharing the store.
    signing_key: SecretStr | None = _env("RECALL_REVIEW_SIGNING_KEY", min_length=16)
    # A precedent's vote by the origin of its record (reviewer, seed, agent, migration, unknown): 1 unless given, e.g.
    # {"unknown": 0.5}; 0 leaves that origin's records out of the vote (they stay on the page).
    origin_weights: Annotated[dict[str, float], NoDecode] = Field(
        default_factory=dict, validation_alias="RECALL_REVIEW_ORIGIN_WEIGHTS"
    )
    # true turns off the rule that escalates a recommendation records of unknown origin swing (finance.policy): they
    # would then decide again. Off only on purpose; a lead's vouching gives reviewed records a known origin instead.
    untrusted_decides: bool = _env("RECALL_REVIEW_UNTRUSTED_DECIDES", False)
    # A case open longer than this many days is overdue (the queues' age badges); due from the day before.
    sla_days: int = _env("RECALL_REVIEW_SLA_DAYS", 5, ge=1, le=365)
    # queue and directory files the pages load (CSV or JSON); the demo files by default
    exceptions_file: Path = _env("RECALL_REVIEW_EXCEPTIONS_FILE", _DEMO / "exceptions.csv")
    tickets_file: Path = _env("RECALL_REVIEW_TICKETS_FILE", _DEMO / "tickets.csv")
    customers_file: Path = _env("RECALL_REVIEW_CUSTOMERS_FILE", _DEMO / "customers.json")
    # Per queue kind, its bank and cases file ({"finance": {"bank": "...", "cases": "..."}}); the older variables
    # above (RECALL_REVIEW_FINANCE_BANK ...) fill what this leaves out, and are kept in step with it.
    queues: Annotated[dict[str, QueueSettings], NoDecode] = Field(
        default_factory=dict, validation_alias="RECALL_REVIEW_QUEUES"
    )
    # Queue kinds beyond the built-in ones, each "package.module:KIND" (dashboard/kinds.py; docs/adding-a-queue-kind.md).
    extra_kinds: Annotated[list[str], NoDecode] = Field(default_factory=list, validation_alias="RECALL_REVIEW_KINDS")
    # The embedded Hindsight's LLM, passed through to hindsight-api as set (unset: no LLM, texts stored
    # verbatim). Any OpenAI-compatible server works: provider "openai" with a base URL.
    llm_provider: str | None = _env("HINDSIGHT_API_LLM_PROVIDER", max_length=40)
    llm_model: str | None = _env("HINDSIGHT_API_LLM_MODEL", max_length=200)
    llm_api_key: SecretStr | None = _env("HINDSIGHT_API_LLM_API_KEY")
    llm_base_url: str | None = _env("HINDSIGHT_API_LLM_BASE_URL", max_length=500)
    enable_observations: bool | None = _env("HINDSIGHT_API_ENABLE_OBSERVATIONS")
    # The languages the embedded server looks for dates in a query in. Unset, hindsight-api tries each of
    # dateparser's ~200 locales on every recall: 60% of a recall's CPU here, for memory written in English.
    query_languages: str = _env(
        "HINDSIGHT_API_QUERY_ANALYZER_LANGUAGES",
        "en",
        pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]+)?(,[a-z]{2,3}(-[A-Za-z0-9]+)?)*$",
    )

    @field_validator("hindsight_api_url")
    @classmethod
    def _url_scheme(cls, url: str | None) -> str | None:
        if not url:
            return None
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"HINDSIGHT_API_URL must start with http:// or https://, got {url[:80]!r}")
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            # Never echo it: the point is that it holds a secret.
            raise ValueError(
                "HINDSIGHT_API_URL must not contain credentials (user:password@); put the key in HINDSIGHT_API_KEY"
            )
        return url.rstrip("/")

    @field_validator("database_url")
    @classmethod
    def _database_scheme(cls, url: SecretStr | None) -> SecretStr | None:
        if url is None or not url.get_secret_value():
            return None
        scheme = url.get_secret_value().split("://", 1)[0]
        if scheme not in ("postgresql+psycopg", "sqlite"):
            raise ValueError(
                f"RECALL_REVIEW_DATABASE_URL must start with postgresql+psycopg:// (or sqlite://), got {scheme[:30]!r}://"
            )
        return url

    @field_validator("approval_limits", mode="before")
    @classmethod
    def _limits_json(cls, value: Any) -> Any:
        return _json_setting(
            value,
            'RECALL_REVIEW_APPROVAL_LIMITS must be a JSON object of role or reviewer name to amount, e.g. {"reviewer": 10000}',
        )

    @field_validator("approval_limits")
    @classmethod
    def _limits_positive(cls, limits: dict[str, float]) -> dict[str, float]:
        for name, amount in limits.items():
            if not name.strip() or not math.isfinite(amount) or amount < 0:
                raise ValueError("RECALL_REVIEW_APPROVAL_LIMITS: every entry needs a name and an amount of 0 or more")
        return limits

    @field_validator("origin_weights", mode="before")
    @classmethod
    def _weights_json(cls, value: Any) -> Any:
        return _json_setting(
            value,
            'RECALL_REVIEW_ORIGIN_WEIGHTS must be a JSON object of record origin to weight, e.g. {"unknown": 0.5}',
        )

    @field_validator("origin_weights")
    @classmethod
    def _weights_known(cls, weights: dict[str, float]) -> dict[str, float]:
        for origin, weight in weights.items():
            if origin not in ORIGINS or not math.isfinite(weight) or weight < 0:
                raise ValueError(
                    f"RECALL_REVIEW_ORIGIN_WEIGHTS: each entry is one of {', '.join(ORIGINS)} with a weight of 0 or more"
                )
        return weights

    @field_validator("reason_codes", mode="before")
    @classmethod
    def _reasons_json(cls, value: Any) -> Any:
        return _json_setting(
            value,
            'RECALL_REVIEW_REASON_CODES must be a JSON object of exception type to {code: label}, e.g. {"price_variance": {"PRICE_AGREED": "Price agreed"}}',
        )

    @field_validator("reason_codes")
    @classmethod
    def _reasons_named(cls, reasons: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        for kind, codes in reasons.items():
            if (
                not kind.strip()
                or not codes
                or any(not code.strip() or not label.strip() for code, label in codes.items())
            ):
                raise ValueError(
                    "RECALL_REVIEW_REASON_CODES: every exception type needs at least one code, each with a label"
                )
        return reasons

    @field_validator("queues", mode="before")
    @classmethod
    def _queues_json(cls, value: Any) -> Any:
        return _json_setting(
            value,
            'RECALL_REVIEW_QUEUES must be a JSON object of queue kind to its settings, e.g. {"finance": {"bank": "ap"}}',
        )

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _hosts_list(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.lstrip().startswith("["):
            return [entry.strip() for entry in value.split(",") if entry.strip()]
        return _json_setting(value, "RECALL_REVIEW_ALLOWED_HOSTS must list host names, comma-separated or as JSON")

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts_named(cls, hosts: list[str]) -> list[str]:
        for host in hosts:
            if not is_host_pattern(host):
                raise ValueError(
                    f"RECALL_REVIEW_ALLOWED_HOSTS: {host[:80]!r} is not a host name (e.g. review.example.com, "
                    "*.example.com or an IP address; no scheme, port or path, and not * alone)"
                )
        return [host.lower().strip("[]").rstrip(".") for host in hosts]

    @field_validator("extra_kinds", mode="before")
    @classmethod
    def _kinds_list(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.lstrip().startswith("["):
            return [entry.strip() for entry in value.split(",") if entry.strip()]
        return _json_setting(
            value, 'RECALL_REVIEW_KINDS must list "package.module:KIND" entries, comma-separated or as JSON'
        )

    @field_validator("extra_kinds")
    @classmethod
    def _kinds_named(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            if not re.match(KIND_ENTRY, entry):
                raise ValueError(f'RECALL_REVIEW_KINDS: {entry[:80]!r} is not "package.module:KIND"')
        return entries

    @model_validator(mode="after")
    def _queues_in_step(self) -> Settings:
        """A built-in kind's RECALL_REVIEW_QUEUES entry wins over its older variables, and is kept in them: one place
        holds each value, so a copy with an older field changed (Settings(**s.model_dump(), finance_bank=...)) says it."""
        for kind, (bank_field, cases_field) in LEGACY_QUEUE_FIELDS.items():
            entry = self.queues.pop(kind, None)
            if entry is not None:
                object.__setattr__(self, bank_field, entry.bank or getattr(self, bank_field))
                object.__setattr__(self, cases_field, entry.cases or getattr(self, cases_field))
                if entry.webhook_url:  # the rest of the entry has no older field: it stays here, without bank and cases
                    self.queues[kind] = entry.model_copy(update={"bank": None, "cases": None})
        return self

    def queue(self, kind: str) -> QueueSettings:
        """A queue kind's settings as configured (its fields None where the kind's defaults apply)."""
        entry = self.queues.get(kind) or QueueSettings()
        if kind in LEGACY_QUEUE_FIELDS:
            bank_field, cases_field = LEGACY_QUEUE_FIELDS[kind]
            return entry.model_copy(update={"bank": getattr(self, bank_field), "cases": getattr(self, cases_field)})
        return entry

    @model_validator(mode="after")
    def _no_key_in_clear_text(self) -> Settings:
        url = self.hindsight_api_url
        plain_http_elsewhere = bool(url) and url.startswith("http://") and not is_loopback(urlsplit(url).hostname)
        if plain_http_elsewhere and self.hindsight_api_key and not self.allow_insecure_http:
            raise ValueError(
                "HINDSIGHT_API_URL: http:// to another host would send HINDSIGHT_API_KEY unencrypted; use https:// "
                "or set RECALL_REVIEW_ALLOW_INSECURE_HTTP=true"
            )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, SecretsToml(settings_cls, _secrets_file.get())

    @property
    def embedded(self) -> bool:
        return self.hindsight_api_url is None

    @property
    def base_url(self) -> str:
        return self.hindsight_api_url or f"http://127.0.0.1:{self.api_port}"

    @property
    def api_key(self) -> str | None:
        return self.hindsight_api_key.get_secret_value() if self.hindsight_api_key else None

    @property
    def signing_secret(self) -> bytes | None:
        """The configured signing key as bytes (None: the review store keeps one)."""
        return signing_secret_of(self.signing_key.get_secret_value()) if self.signing_key else None

    @property
    def store_url(self) -> str | None:
        return self.database_url.get_secret_value() if self.database_url else None

    def embedded_llm_env(self) -> dict[str, str]:
        """The embedded hindsight-api's LLM variables; no provider set means none (verbatim retain)."""
        values = {
            "HINDSIGHT_API_LLM_PROVIDER": self.llm_provider or "none",
            "HINDSIGHT_API_LLM_MODEL": self.llm_model,
            "HINDSIGHT_API_LLM_API_KEY": self.llm_api_key.get_secret_value() if self.llm_api_key else None,
            "HINDSIGHT_API_LLM_BASE_URL": self.llm_base_url,
            "HINDSIGHT_API_ENABLE_OBSERVATIONS": None
            if self.enable_observations is None
            else str(self.enable_observations).lower(),
        }
        return {name: value for name, value in values.items() if value}

    @property
    def banks(self) -> tuple[str, ...]:
        """The banks this dashboard may read: nothing else is reachable from any page."""
        built_in = (self.queue(kind).bank for kind in LEGACY_QUEUE_FIELDS)
        return tuple(dict.fromkeys([*built_in, *(q.bank for q in self.queues.values() if q.bank)]))


class SecretsToml(TomlConfigSettingsSource):
    """`.streamlit/secrets.toml`: top-level keys named like the environment variables, a `[hindsight]` table
    (the same keys), a `[roles]` table (RECALL_REVIEW_ROLES), an `[approval_limits]` table
    (RECALL_REVIEW_APPROVAL_LIMITS), `[reason_codes.<type>]` tables (RECALL_REVIEW_REASON_CODES), `[queues.<kind>]` tables
    (RECALL_REVIEW_QUEUES) and a `kinds` list (RECALL_REVIEW_KINDS). Empty values count as unset."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path):
        super().__init__(settings_cls, toml_file=path)

    def _read_file(self, file_path: Path) -> dict[str, Any]:
        data = super()._read_file(file_path)
        if isinstance(data.get("hindsight"), dict):
            data = {**data, **data.pop("hindsight")}
        if isinstance(data.get("roles"), dict):
            data["RECALL_REVIEW_ROLES"] = data.pop("roles")
        if isinstance(data.get("approval_limits"), dict):
            data["RECALL_REVIEW_APPROVAL_LIMITS"] = data.pop("approval_limits")
        if isinstance(data.get("reason_codes"), dict):
            data["RECALL_REVIEW_REASON_CODES"] = data.pop("reason_codes")
        if isinstance(data.get("queues"), dict):
            data["RECALL_REVIEW_QUEUES"] = data.pop("queues")
        if isinstance(data.get("kinds"), list):
            data["RECALL_REVIEW_KINDS"] = data.pop("kinds")
        return {key: value for key, value in data.items() if value not in (None, "")}


def settings_problem(exc: ValidationError) -> str:
    """A settings error as one line per bad setting, named as the operator sets it (no values echoed)."""
    lines = []
    for error in exc.errors(include_input=False, include_url=False):
        name = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        lines.append(message if not name or message.startswith(name) else f"{name}: {message}")
    return "\n".join(lines)


def sign_in_configured() -> bool:
    """Whether this deployment signs people in: an [auth] table in a secrets.toml Streamlit reads (the project's or
    the home directory's). The CLI then acts as an API token's owner, never as a typed name."""
    for path in (_secrets_file.get(), Path.home() / ".streamlit" / "secrets.toml"):
        try:
            if "auth" in tomllib.loads(path.read_text()):
                return True
        except (OSError, tomllib.TOMLDecodeError):
            continue
    return False


def load_settings(secrets_file: Path | None = None) -> Settings:
    """The settings of this process (a `pydantic.ValidationError` names the bad setting)."""
    token = _secrets_file.set(secrets_file or SECRETS_FILE)
    try:
        return Settings()
    finally:
        _secrets_file.reset(token)
