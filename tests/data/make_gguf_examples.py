"""Writes the two small GGUF files docs/generate.md reads (tests/data/gguf/), with gguf's own GGUFWriter.

Written with gguf 0.19.0 (llama.cpp's package), from the checkout's root:
``PYTHONPATH=$PWD python tests/data/make_gguf_examples.py``.

- llama3.gguf: a llama (256 wide, 8 heads, 32 rotated columns, base 500000, context 4096) and the
  ``rope_freqs`` tensor llama.cpp's convert_hf_to_gguf.py writes for Llama 3.1's scaling (factor 8,
  low/high frequency factors 1 and 4, original context 512);
- gpt2.gguf: a learned (12, 6) position table, an F16 token table and a Q4_0 weight.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from tests.references import llama3_rope_freqs

HERE = Path(__file__).parent / "gguf"


def write(writer: gguf.GGUFWriter) -> None:
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main() -> None:
    HERE.mkdir(exist_ok=True)
    llama = gguf.GGUFWriter(str(HERE / "llama3.gguf"), "llama")
    llama.add_context_length(4096)
    llama.add_embedding_length(256)
    llama.add_head_count(8)
    llama.add_rope_freq_base(500000.0)
    llama.add_rope_dimension_count(32)
    llama.add_tensor("rope_freqs.weight", llama3_rope_freqs(500000.0, 32, 8.0, 1.0, 4.0, 512))
    write(llama)

    gpt2 = gguf.GGUFWriter(str(HERE / "gpt2.gguf"), "gpt2")
    gpt2.add_context_length(12)
    rng = np.random.default_rng(0)
    gpt2.add_tensor("position_embd.weight", rng.standard_normal((12, 6)).astype(np.float32))
    gpt2.add_tensor("token_embd.weight", rng.standard_normal((5, 6)).astype(np.float16))
    gpt2.add_tensor("blk.0.attn_q.weight", np.zeros((4, 18), np.uint8), raw_dtype=gguf.GGMLQuantizationType.Q4_0)
    write(gpt2)


if __name__ == "__main__":
    main()
