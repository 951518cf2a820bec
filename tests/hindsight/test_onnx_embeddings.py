"""The embedded server's MiniLM on ONNX Runtime gives the vectors PyTorch gives (hindsight/onnx_embeddings.py), and
the running server uses it."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psutil

from dashboard.cli.seed import finance_records
from dashboard.hindsight import onnx_embeddings


def run(coroutine):
    """asyncio.run on a thread of its own: a worker that ran a browser test has Playwright's loop running in this one."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


def test_the_exported_graph_on_hindsights_onnx_provider_gives_sentence_transformers_vectors():
    """hindsight-api's own OnnxEmbeddings, set up with the settings the embedded server gets, against
    sentence-transformers on the same weights (what the `local` provider runs): short texts and a text past the
    model's 256 tokens (both must cut it at the same place), one at a time and padded together in a batch."""
    from hindsight_api.engine.embeddings import OnnxEmbeddings
    from sentence_transformers import SentenceTransformer

    env = onnx_embeddings.server_env()
    onnx = OnnxEmbeddings(
        model_id=env["HINDSIGHT_API_EMBEDDINGS_ONNX_MODEL_ID"],
        model_path=env["HINDSIGHT_API_EMBEDDINGS_ONNX_MODEL_PATH"],
        tokenizer_name_or_path=env["HINDSIGHT_API_EMBEDDINGS_ONNX_TOKENIZER_NAME_OR_PATH"],
        max_tokens=int(env["HINDSIGHT_API_EMBEDDINGS_ONNX_MAX_TOKENS"]),
        pooling=env["HINDSIGHT_API_EMBEDDINGS_ONNX_POOLING"],
        query_prefix=env["HINDSIGHT_API_EMBEDDINGS_ONNX_QUERY_PREFIX"],
        passage_prefix=env["HINDSIGHT_API_EMBEDDINGS_ONNX_PASSAGE_PREFIX"],
    )
    run(onnx.initialize())
    long_text = " ".join(f"Vendor V{i} invoice {i * 37} was disputed over freight." for i in range(80))
    texts = [r.content for r in finance_records()[:6]] + ["V12 price variance", long_text]
    torch_model = SentenceTransformer(str(onnx_embeddings.weights_dir()), device="cpu")
    assert torch_model.max_seq_length == onnx_embeddings.MAX_TOKENS
    assert len(torch_model.tokenizer(long_text)["input_ids"]) > onnx_embeddings.MAX_TOKENS  # it is cut
    expected = torch_model.encode(texts, normalize_embeddings=True)

    together = np.array(run(onnx.encode(texts)))
    one_by_one = np.array([run(onnx.encode([text]))[0] for text in texts])
    assert together.shape == expected.shape == (len(texts), 384)
    assert np.abs(together - expected).max() < 1e-5
    assert np.abs(one_by_one - expected).max() < 1e-5


def test_the_embedded_server_embeds_with_the_exported_graph(live):
    """In both modes: the extracting server embeds its facts and observations the same way."""
    api = live.server.status().api_pid
    environ = psutil.Process(api).environ()
    assert environ["HINDSIGHT_API_EMBEDDINGS_PROVIDER"] == "onnx"
    assert environ["HINDSIGHT_API_EMBEDDINGS_ONNX_MODEL_PATH"] == str(onnx_embeddings.model_file())
    log = live.server.api_log.read_text(errors="replace")
    assert f"initializing ONNX provider with model {onnx_embeddings.MODEL_ID} ({onnx_embeddings.model_file()})" in log
    assert "Embeddings: ONNX provider initialized (dim: 384" in log
