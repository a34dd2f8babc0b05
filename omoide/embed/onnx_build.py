"""A BERT sentence encoder as an ONNX graph, written from its safetensors weights: no torch.

The graph is what ``transformers``' ``BertModel`` in eval mode computes (eager attention),
followed by sentence-transformers' mean pooling over the attention mask: embeddings (word +
position + token type, layer norm), then per layer self-attention (the padding masked with the
float32 minimum, as transformers does), a residual layer norm, the exact erf GELU feed-forward
and another residual layer norm. Dense weights are stored transposed, one ``MatMul`` + ``Add``
each, the shape ``torch.onnx.export`` gave: ``onnxruntime.quantization`` then quantises the
same products it did (``onnx_quantize.py``).

Only the parts of a BERT config that change the computation are read; anything else (another
architecture, relative positions, another activation) is refused with a message naming the
torch runtime, which runs any sentence-transformers model.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from omoide.errors import EmbedderError

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "sentence_embedding"
_TORCH = "set OMOIDE_EMBED_RUNTIME=torch (`pip install 'omoide[torch]'`)"


def build_graph(model_dir: Path, weights: Path, target: Path) -> None:
    """Write ``target``: the mean-pooled encoder of ``model_dir`` as an ONNX model."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise EmbedderError(
            f"building the ONNX model needs onnx and safetensors ({exc}): "
            "`pip install omoide`, or " + _TORCH,
            retryable=False,
        ) from exc
    config = _bert_config(model_dir)
    if weights.suffix != ".safetensors":
        raise EmbedderError(
            f"{weights.name}: only safetensors weights load without torch; {_TORCH}"
        )
    tensors = {_strip(k): v for k, v in load_file(str(weights)).items()}
    graph = _Graph(helper, numpy_helper, tensors)
    hidden = graph.embeddings(config["layer_norm_eps"])
    for layer in range(config["num_hidden_layers"]):
        hidden = graph.layer(hidden, layer, config["num_attention_heads"], config["layer_norm_eps"])
    graph.mean_pool(hidden)
    dims = {name: ["batch", "sequence"] for name in INPUTS}
    model = helper.make_model(
        helper.make_graph(
            graph.nodes,
            "mean_pooled_bert",
            [helper.make_tensor_value_info(n, TensorProto.INT64, dims[n]) for n in INPUTS],
            [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", None])],
            graph.initializers,
        ),
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="omoide",
    )
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


def _bert_config(model_dir: Path) -> dict[str, Any]:
    path = model_dir / "config.json"
    config = json.loads(path.read_text()) if path.is_file() else {}
    supported = (
        config.get("model_type") == "bert"
        and config.get("hidden_act", "gelu") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and config.get("hidden_size", 0) % max(config.get("num_attention_heads", 0), 1) == 0
    )
    if not supported:
        raise EmbedderError(
            f"{model_dir.name}: the ONNX runtime builds BERT encoders with GELU and absolute "
            f"positions only (model_type {config.get('model_type')!r}); {_TORCH}",
            retryable=False,
        )
    return {
        "num_hidden_layers": int(config["num_hidden_layers"]),
        "num_attention_heads": int(config["num_attention_heads"]),
        "layer_norm_eps": float(config.get("layer_norm_eps", 1e-12)),
    }


def _strip(name: str) -> str:
    """Checkpoints saved from ``BertForX`` prefix the encoder's names with ``bert.``."""
    return name.removeprefix("bert.")


class _Graph:
    """Nodes and initializers of the graph as it grows; each method returns its output name."""

    def __init__(self, helper: Any, numpy_helper: Any, tensors: dict[str, np.ndarray]) -> None:
        self.helper, self.numpy_helper, self.tensors = helper, numpy_helper, tensors
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(self.numpy_helper.from_array(value, name))
        return name

    def weight(self, name: str, transpose: bool = False) -> str:
        try:
            value = self.tensors[name]
        except KeyError:
            raise EmbedderError(f"the weights have no {name}; {_TORCH}", retryable=False) from None
        value = np.ascontiguousarray(value.T if transpose else value, dtype=np.float32)
        return self.const(name + (".T" if transpose else ""), value)

    def op(self, kind: str, *inputs: str, out: str | None = None, **attrs: Any) -> str:
        self._count += 1
        name = out or f"{kind.lower()}_{self._count}"
        self.nodes.append(self.helper.make_node(kind, list(inputs), [name], **attrs))
        return name

    def dense(self, x: str, prefix: str) -> str:
        product = self.op("MatMul", x, self.weight(f"{prefix}.weight", transpose=True))
        return self.op("Add", product, self.weight(f"{prefix}.bias"))

    def norm(self, x: str, prefix: str, eps: float) -> str:
        gamma, beta = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=eps)

    def embeddings(self, eps: float) -> str:
        words = self.op("Gather", self.weight("embeddings.word_embeddings.weight"), "input_ids")
        width = self.op("Shape", "input_ids", start=1, end=2)
        zero = self.const("zero_1d", np.array([0], dtype=np.int64))
        table = self.weight("embeddings.position_embeddings.weight")
        ids = self.const("position_ids", np.arange(self.tensors[table].shape[0], dtype=np.int64))
        # a Gather of constant rows, as torch exported it: the int8 runtime quantises it alike
        positions = self.op("Gather", table, self.op("Slice", ids, zero, width, zero))
        types = self.op(
            "Gather", self.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"
        )
        summed = self.op("Add", self.op("Add", words, types), positions)  # torch's order
        mask = self.op("Cast", "attention_mask", out="mask_float", to=1)  # FLOAT
        # transformers' extended mask: 0 where attended, the float32 minimum where padded
        minimum = self.const("float_min", np.array(np.finfo(np.float32).min, dtype=np.float32))
        one = self.const("one", np.array(1.0, dtype=np.float32))
        padded = self.op("Mul", self.op("Sub", one, mask), minimum)
        axes = self.const("axes_1_2", np.array([1, 2], dtype=np.int64))
        self.op("Unsqueeze", padded, axes, out="attention_bias")  # batch x 1 x 1 x sequence
        return self.norm(summed, "embeddings.LayerNorm", eps)

    def layer(self, x: str, index: int, heads: int, eps: float) -> str:
        prefix = f"encoder.layer.{index}"
        width = self.tensors[f"{prefix}.attention.self.query.weight"].shape[0]
        split = self.const(f"{prefix}.split", np.array([0, 0, heads, width // heads], np.int64))
        merge = self.const(f"{prefix}.merge", np.array([0, 0, width], np.int64))

        def heads_of(name: str, perm: list[int]) -> str:
            projected = self.dense(x, f"{prefix}.attention.self.{name}")
            return self.op("Transpose", self.op("Reshape", projected, split), perm=perm)

        query = heads_of("query", [0, 2, 1, 3])
        key = heads_of("key", [0, 2, 3, 1])
        value = heads_of("value", [0, 2, 1, 3])
        scale = self.const(f"{prefix}.scale", np.array((width // heads) ** -0.5, np.float32))
        scores = self.op("Mul", self.op("MatMul", query, key), scale)
        weights = self.op("Softmax", self.op("Add", scores, "attention_bias"), axis=-1)
        context = self.op("Transpose", self.op("MatMul", weights, value), perm=[0, 2, 1, 3])
        attended = self.dense(
            self.op("Reshape", context, merge), f"{prefix}.attention.output.dense"
        )
        x = self.norm(self.op("Add", attended, x), f"{prefix}.attention.output.LayerNorm", eps)
        inner = self.dense(x, f"{prefix}.intermediate.dense")
        root2 = self.const(f"{prefix}.root2", np.array(math.sqrt(2.0), dtype=np.float32))
        half = self.const(f"{prefix}.half", np.array(0.5, dtype=np.float32))
        erf = self.op("Erf", self.op("Div", inner, root2))
        one = self.const(f"{prefix}.one", np.array(1.0, dtype=np.float32))
        gelu = self.op("Mul", self.op("Mul", inner, self.op("Add", erf, one)), half)
        out = self.dense(gelu, f"{prefix}.output.dense")
        return self.norm(self.op("Add", out, x), f"{prefix}.output.LayerNorm", eps)

    def mean_pool(self, hidden: str) -> str:
        axis1 = self.const("axis_1", np.array([1], dtype=np.int64))
        axis2 = self.const("axis_2", np.array([2], dtype=np.int64))
        mask = self.op("Unsqueeze", "mask_float", axis2)  # batch x sequence x 1
        total = self.op("ReduceSum", self.op("Mul", hidden, mask), axis1, keepdims=0)
        floor = self.const("count_floor", np.array(1e-9, dtype=np.float32))
        count = self.op("Clip", self.op("ReduceSum", mask, axis1, keepdims=0), floor)
        return self.op("Div", total, count, out=OUTPUT)
