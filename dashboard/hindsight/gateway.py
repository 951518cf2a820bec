"""The one place that talks to Hindsight: the official client for recall/retain, plain HTTP for
health, version and bank statistics. Everything returned is one of our pydantic models or a dict.

The client keeps an aiohttp session bound to the event loop that first used it, and its sync methods
use the calling thread's loop; Streamlit runs each script run on a fresh thread. So the gateway owns
ONE event loop on one daemon thread and runs every client call there: a single gateway is safe to
share between threads (st.cache_resource), and several recalls can be in flight at once.
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import aiohttp
from hindsight_client import Hindsight
from hindsight_client_api.exceptions import ApiException
from hindsight_client_api.models.chunk_include_options import ChunkIncludeOptions
from hindsight_client_api.models.include_options import IncludeOptions
from hindsight_client_api.models.source_facts_include_options import SourceFactsIncludeOptions
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from dashboard.hindsight.documents import CHUNK_TOKENS, SOURCE_FACT_TOKENS
from dashboard.hindsight.errors import HindsightFailed, HindsightRequestRejected, HindsightUnavailable
from dashboard.hindsight.wire import (
    MAX_TAG_LENGTH,
    Budget,
    CurationState,
    MemoryMode,
    MemoryRecord,
    RecallResponse,
    StoredDocument,
    TagsMatch,
)

RETAIN_BATCH_SIZE = 50
RETAIN_TIMEOUT_S = 300.0
RETAIN_ATTEMPTS = 4
# The original text of each result's document and the facts behind each observation: what `documents.group`
# needs in both server modes. Entity summaries (on by default) are not used here.
_INCLUDE = IncludeOptions(
    entities=None,
    chunks=ChunkIncludeOptions(max_tokens=CHUNK_TOKENS),
    source_facts=SourceFactsIncludeOptions(max_tokens=SOURCE_FACT_TOKENS),
)
RECALL_CONCURRENCY = 4  # measured: the server is ~one core; more in flight only queues
T = TypeVar("T")


MAX_QUERY_CHARS = 5000
_RAISE = object()


def _bank(bank_id: str) -> str:
    return f"/v1/default/banks/{urllib.parse.quote(bank_id, safe='')}"


def _server_message(body: str | None) -> str:
    """The human part of a FastAPI error body: {"detail": [{"loc": [...], "msg": "..."}]} or {"detail": "..."}."""
    try:
        detail = json.loads(body or "").get("detail")
    except (ValueError, AttributeError):
        return (body or "").strip()[:300]
    if isinstance(detail, list):
        return "; ".join(f"{'.'.join(str(p) for p in d.get('loc', [])[1:])}: {d.get('msg', '')}" for d in detail)
    return str(detail)


def check_query(query: str) -> str:
    """A recall query the server will accept, or a clear error naming the field."""
    text = query.strip()
    if not re.search(r"\w", text):
        raise HindsightRequestRejected("query: needs at least one letter or digit")
    if len(text) > MAX_QUERY_CHARS:
        raise HindsightRequestRejected(f"query: {len(text):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    return text


def check_tags(tags: list[str] | None) -> list[str] | None:
    for i, tag in enumerate(tags or [], 1):
        if not tag.strip() or len(tag) > MAX_TAG_LENGTH or any(ord(ch) < 32 for ch in tag):
            raise HindsightRequestRejected(
                f"tags[{i}]: {tag[:40]!r} must be 1-{MAX_TAG_LENGTH} characters without control characters"
            )
    return tags


class HindsightGateway:
    def __init__(
        self, base_url: str, api_key: str | None = None, timeout: float = 30.0, retain_timeout: float = RETAIN_TIMEOUT_S
    ):
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout = timeout  # recalls and reads
        # The client's own timeout bounds what has no per-call one: retain, which with an LLM extracts facts
        # from every document before it answers.
        self._client = Hindsight(self.base_url, api_key=api_key, timeout=retain_timeout)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="hindsight-client", daemon=True)
        self._thread.start()

    def _translate(self, exc: Exception) -> Exception:
        """The client's own exceptions as HindsightUnavailable or HindsightRequestRejected; others unchanged."""
        if isinstance(exc, ApiException):
            if exc.status is not None and 400 <= exc.status < 500:
                return HindsightRequestRejected(f"Hindsight refused the request: {_server_message(exc.body)}")
            return HindsightFailed(f"Hindsight at {self.base_url} failed: HTTP {exc.status} {exc.reason or ''}".strip())
        if isinstance(exc, (aiohttp.ClientError, asyncio.TimeoutError, OSError)):
            reason = str(exc) or (
                "no answer in time" if isinstance(exc, asyncio.TimeoutError) else "the connection failed"
            )
            return HindsightUnavailable(
                f"Hindsight at {self.base_url} is unreachable: {reason}"
            )  # a reason, not a class name
        return exc

    def _run(self, coroutine: Awaitable[T]) -> T:
        """Run a client coroutine on the gateway's loop and wait for it, from any thread."""
        try:
            return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()
        except Exception as exc:
            translated = self._translate(exc)
            if translated is exc:
                raise
            raise translated from exc

    def __repr__(self) -> str:  # never show the key
        return f"HindsightGateway({self.base_url!r})"

    # -- plain HTTP ---------------------------------------------------------------
    def _get(self, path: str, timeout: float | None = None, missing: object = _RAISE) -> dict:
        """GET a JSON body; a 404 returns `missing` when one is given."""
        request = urllib.request.Request(self.base_url + path)
        if self._api_key:
            request.add_header("Authorization", f"Bearer {self._api_key}")
        try:
            with urllib.request.urlopen(request, timeout=timeout or self._timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 404 and missing is not _RAISE:
                return missing  # type: ignore[return-value]
            raise HindsightUnavailable(f"GET {path} answered HTTP {exc.code}") from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise HindsightUnavailable(f"Hindsight at {self.base_url} is unreachable: {exc}") from exc

    def health(self) -> dict:
        return self._get("/health", timeout=3.0)

    def version(self) -> str:
        return str(self._get("/version").get("api_version", "unknown"))

    def bank_stats(self, bank_id: str) -> dict:
        return self._get(f"{_bank(bank_id)}/stats?refresh=true")

    # -- documents: what was retained, as it was sent ----------------------------------
    def document(self, bank_id: str, document_id: str) -> StoredDocument | None:
        """The document with its original text, or None when the bank has no such document."""
        body = self._get(f"{_bank(bank_id)}/documents/{urllib.parse.quote(document_id, safe='')}", missing=None)
        return None if body is None else StoredDocument.model_validate(body)

    def delete_document(self, bank_id: str, document_id: str) -> bool:
        """Delete the document and its memories; False when the bank has no such document."""
        if self.document(bank_id, document_id) is None:
            return False
        self._run(self._client.documents.delete_document(bank_id, document_id, _request_timeout=self._timeout))
        return True

    def list_documents(
        self, bank_id: str, *, untagged: bool = False, search: str | None = None, limit: int = 100, offset: int = 0
    ) -> dict:
        """One page of the bank's documents, without their text: {"items": [{id, tags, content_hash, ...}], "total"}.
        `untagged`: only documents retained without tags (the server's `exact` match on no tags); `search`: only
        those whose id or text contains it (case-insensitive, the server's `q`)."""
        params = {
            "limit": limit,
            "offset": offset,
            **({"tags_match": "exact"} if untagged else {}),
            **({"q": search} if search else {}),
        }
        return self._get(f"{_bank(bank_id)}/documents?{urllib.parse.urlencode(params)}")

    def memory_mode(self, bank_id: str) -> MemoryMode:
        """How the server stores this bank's documents, as the bank's resolved configuration says."""
        return MemoryMode.of(self.bank_config(bank_id).get("config", {}))

    def wait_until_consolidated(self, bank_id: str, timeout: float = 120.0, poll_s: float = 0.25) -> None:
        """Wait for the bank's background work (consolidation into observations) to finish; a no-op without
        observations. HindsightUnavailable after `timeout`."""
        if not self.memory_mode(bank_id).observations:
            return
        deadline = time.monotonic() + timeout
        while True:
            stats = self.bank_stats(bank_id)
            if not stats.get("pending_consolidation") and not stats.get("pending_operations"):
                return
            if time.monotonic() > deadline:
                raise HindsightUnavailable(f"{bank_id}: consolidation not finished after {timeout:.0f} s")
            time.sleep(poll_s)

    # -- client -------------------------------------------------------------------
    def ensure_bank(self, bank_id: str) -> None:
        self._run(self._client.acreate_bank(bank_id, name=bank_id))  # create-or-update: idempotent

    def recall(
        self,
        bank_id: str,
        query: str,
        *,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        budget: Budget = "mid",
        max_tokens: int = 4096,
        trace: bool = False,
        types: list[str] | None = None,
    ) -> RecallResponse:
        return self._run(
            self.arecall(
                bank_id,
                query,
                tags=tags,
                tags_match=tags_match,
                budget=budget,
                max_tokens=max_tokens,
                trace=trace,
                types=types,
            )
        )

    async def arecall(
        self,
        bank_id: str,
        query: str,
        *,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        budget: Budget = "mid",
        max_tokens: int = 4096,
        trace: bool = False,
        types: list[str] | None = None,
    ) -> RecallResponse:
        """One recall as a coroutine; it must run on the gateway's loop (recall, recall_many).

        The query and tags are checked before anything is sent (HindsightRequestRejected naming the field),
        whichever way the recall comes. Every recall asks for the original chunks of its facts and the source
        facts of its observations (see hindsight.documents), not for entity summaries. The response body is parsed straight from JSON into our model
        (RecallResponse.model_validate_json): the client's own path builds its generated models and then
        a dict, ~3x slower on a 1 MB trace.
        """
        from hindsight_client_api.models.recall_request import RecallRequest

        query, tags = check_query(query), check_tags(tags)

        request = RecallRequest(
            query=query,
            types=types,
            budget=budget,
            max_tokens=max_tokens,
            trace=trace,
            tags=tags,
            tags_match=tags_match,
            include=_INCLUDE,
        )
        response = await self._client.memory.recall_memories_without_preload_content(
            bank_id, request, _request_timeout=self._timeout
        )
        body = await response.read()
        if response.status >= 400:
            raise ApiException(status=response.status, reason=response.reason, body=body.decode(errors="replace"))
        return RecallResponse.model_validate_json(body)

    def recall_many(
        self,
        jobs: Sequence[Callable[[], Awaitable[T]]],
        *,
        concurrency: int = RECALL_CONCURRENCY,
        progress: Callable[[int, int], None] | None = None,
        on_result: Callable[[int, T | BaseException], None] | None = None,
    ) -> list[T | BaseException]:
        """Run many recall coroutines (zero-argument factories, e.g. `lambda: atwo_stage_recall(gw.arecall, ...)`)
        on the gateway's loop, at most `concurrency` in flight (the server is one process: past ~4 it
        only queues). Results come back in job order; a failed job's slot holds its exception.
        `progress(done, total)` and `on_result(job index, result)` are called on the CALLING thread as each
        job finishes (so they may drive st.progress, or use a result before the last job is done)."""
        total = len(jobs)
        results: list[T | BaseException | None] = [None] * total
        finished: queue.SimpleQueue[int] = queue.SimpleQueue()

        async def run_all() -> None:
            gate = asyncio.Semaphore(max(1, concurrency))

            async def one(i: int) -> None:
                async with gate:
                    try:
                        results[i] = await jobs[i]()
                    except Exception as exc:  # noqa: BLE001 - reported per job
                        results[i] = self._translate(exc)
                finished.put(i)

            await asyncio.gather(*(one(i) for i in range(total)))

        future = asyncio.run_coroutine_threadsafe(run_all(), self._loop)
        for done in range(1, total + 1):
            index = finished.get()
            if on_result is not None:
                on_result(index, results[index])
            if progress is not None:
                progress(done, total)
        future.result()
        return results  # type: ignore[return-value]

    def retain(self, bank_id: str, records: Sequence[MemoryRecord]) -> int:
        """Retain synchronously in batches; each record replaces any earlier one with its document id.

        A batch the server failed (5xx; an unreachable server is not retried here) is sent again, a few times:
        every record has a document id, so a repeat replaces rather than duplicates. Seen on 1.1.0 with an LLM: re-retaining documents whose facts
        feed observations can hit a database deadlock ("deadlock detected") while consolidation runs."""
        for start in range(0, len(records), RETAIN_BATCH_SIZE):
            batch = [r.as_retain_item() for r in records[start : start + RETAIN_BATCH_SIZE]]
            for attempt in Retrying(
                retry=retry_if_exception_type(HindsightFailed),
                stop=stop_after_attempt(RETAIN_ATTEMPTS),
                wait=wait_exponential(multiplier=0.5, max=4),
                reraise=True,
            ):
                with attempt:
                    self._run(self._client.aretain_batch(bank_id, batch))
        return len(records)

    def list_memories(
        self,
        bank_id: str,
        *,
        tags: list[str] | None = None,
        tags_match: TagsMatch | None = None,
        document_id: str | None = None,
        state: CurationState | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> dict:
        """One page of memories (the server lists only valid ones unless `state` says "invalidated")."""
        response = self._run(
            self._client.alist_memories(
                bank_id,
                tags=tags,
                tags_match=tags_match,
                document_id=document_id,
                state=state,
                limit=limit,
                offset=offset,
            )
        )
        return response.to_dict() if hasattr(response, "to_dict") else dict(response)

    def set_document_state(
        self, bank_id: str, document_id: str, state: CurationState, reason: str | None = None
    ) -> int:
        """Curate every memory of a document (each fact, with an LLM): "invalidated" retires them from recall (the
        server prunes the observations derived from them and keeps them for audit), "valid" brings them back.
        Returns how many changed. Idempotent: only the memories not yet in `state` are listed and patched, so a
        repeat after a partial failure finishes the job."""
        from hindsight_client_api.models.update_memory_request import UpdateMemoryRequest

        other = "valid" if state == "invalidated" else "invalidated"
        ids: list[str] = []
        while True:  # list first, then patch: patching while paging would shift the pages
            page = self._run(
                self._client.alist_memories(bank_id, document_id=document_id, state=other, limit=100, offset=len(ids))
            )
            ids += [item.id for item in page.items]
            if not page.items or len(ids) >= page.total:
                break
        request = UpdateMemoryRequest(state=state, reason=reason if state == "invalidated" else None)
        for memory_id in ids:
            self._run(self._client.memory.update_memory(bank_id, memory_id, request, _request_timeout=self._timeout))
        return len(ids)

    def close(self) -> None:
        try:
            self._run(self._client.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            self._loop.close()

    # -- audit log ---------------------------------------------------------------------
    # What an agent actually recalled: Hindsight 1.1.0 keeps each recall's request and response when
    # the bank's audit log is on. Listing returns entries without bodies; one entry comes with both.

    def bank_config(self, bank_id: str) -> dict:
        """The bank's resolved configuration: {"bank_id", "config", "overrides"}."""
        return self._run(self._client.aget_bank_config(bank_id))

    def audit_log_enabled(self, bank_id: str) -> bool:
        return bool(self.bank_config(bank_id).get("config", {}).get("audit_log_enabled"))

    def enable_audit_log(self, bank_id: str, enabled: bool = True) -> None:
        """Turn the bank's audit log on (or off). Cost: every recall's full response is stored server-side."""
        self._run(self._client.aupdate_bank_config(bank_id, audit_log_enabled=enabled))

    def list_audit_entries(
        self,
        bank_id: str,
        *,
        action: str | None = "recall",
        start: str | None = None,
        end: str | None = None,
        limit: int = 500,
        offset: int = 0,
    ) -> dict:
        """One page of entries, newest first, without bodies: {"total", "items": [{id, action, started_at, ...}]}."""
        params = {"action": action, "start_date": start, "end_date": end, "limit": limit, "offset": offset}
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        return self._get(f"{_bank(bank_id)}/audit-logs?{query}")

    def audit_entry(self, bank_id: str, entry_id: str) -> dict:
        """One entry with its `request` and `response` bodies."""
        return self._get(f"{_bank(bank_id)}/audit-logs/{urllib.parse.quote(entry_id, safe='')}")

    # -- fusion lab: bank clones for A/B comparisons ---------------------------------------------
    def clone_bank(self, bank_id: str, target_bank_id: str, timeout: float = 300.0) -> None:
        """Copy a bank (memories and config) into a new one and wait until the copy is complete."""
        self.clone_banks({bank_id: target_bank_id}, timeout)

    def clone_banks(self, pairs: dict[str, str], timeout: float = 300.0, poll_s: float = 0.1) -> None:
        """Copy each bank into its new one (source -> target), the copies running side by side on the server,
        and wait until all are complete."""
        pending = {
            source: self._run(self._client.aclone_bank(source, target, include_history=False))
            for source, target in pairs.items()
        }
        deadline = time.monotonic() + timeout
        while pending:
            for source, operation_id in list(pending.items()):
                status = self._run(self._client.operations.get_operation_status(source, operation_id)).status
                if status == "completed":
                    del pending[source]
                elif status in ("failed", "cancelled", "not_found"):
                    raise HindsightUnavailable(f"cloning {source} into {pairs[source]} ended {status}")
            if pending and time.monotonic() > deadline:
                raise HindsightUnavailable(f"cloning {', '.join(pending)} did not finish in {timeout:.0f} s")
            if pending:
                time.sleep(poll_s)

    def update_bank_config(self, bank_id: str, **settings: object) -> None:
        """Per-bank settings, e.g. enable_graph_retrieval=False, recall_budget_fixed_mid=100."""
        self._run(self._client.aupdate_bank_config(bank_id, **settings))

    def delete_bank(self, bank_id: str) -> None:
        self._run(self._client.adelete_bank(bank_id))
