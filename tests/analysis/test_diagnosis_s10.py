"""Causes compare's diagnosis left unnamed or slow (session 10, diag4): an engine's RoPE cache with one mistake,
compared with the model's config through the CLI, and the diagnosis's cost on long tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.analysis.test_diagnosis_sweep_s9 import LLAMA, LLAMA3, _diagnosis, _engine, _rotary
from tests.conftest import run_in_process

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.mark.parametrize("layout", ["pair", "cos_sin_cache"])
def test_llama31_max_position_embeddings_as_the_original_context_is_named(tmp_path: Path, layout: str) -> None:
    # Llama 3.1: factor 8, original 8192, max_position_embeddings 131072 = 16 × 8192 (not the scaled 8 × 8192)
    config = {**LLAMA, "rope_scaling": LLAMA3}
    wrong = {**LLAMA, "rope_scaling": {**LLAMA3, "original_max_position_embeddings": 131072}}
    inv_freq, scale = _rotary(wrong)
    assert not np.allclose(inv_freq, _rotary(config)[0])
    found = _diagnosis(tmp_path, config, _engine(tmp_path / "engine", layout, inv_freq, scale))
    assert [item["code"] for item in found][:1] == ["original_max_position"]
    assert "original_max_position 131072 (16 × 8192" in str(found[0]["message"])
    assert "max_position_embeddings" in str(found[0]["message"])


@pytest.mark.parametrize(
    ("beta", "raised"),
    [({"beta_fast": 1e308}, "math domain error"), ({"beta_slow": 1e-320}, "OverflowError")],
)
def test_yarn_beta_that_transformers_cannot_compute_is_refused_in_one_line(
    tmp_path: Path, beta: dict[str, float], raised: str
) -> None:
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, **beta}
    with pytest.raises((ValueError, OverflowError)):  # transformers' own _compute_yarn_parameters
        LlamaRotaryEmbedding(LlamaConfig(**{**LLAMA, "rope_scaling": yarn}))
    name = next(iter(beta))
    flag = "--" + name.replace("_", "-")
    result = run_in_process("generate", "rope", "--len", "8", "--dim", "16", "--scaling", "yarn", "--factor", "4",
                            "--original-max-position", "4096", flag, repr(beta[name]), "--part", "cos",
                            "-o", str(tmp_path / "y.npy"))  # fmt: skip
    assert result.code == 2 and not (tmp_path / "y.npy").exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"pecli: error: {flag} = {beta[name]!r} puts the ramp's end")
    assert raised in lines[0]


def _pair(length: int, width: int, **params: object) -> np.ndarray:
    import pecli

    parts = [pecli.encode("rope", length, width // 2, part=part, dtype="float64", **params) for part in ("cos", "sin")]
    return np.hstack(parts)


LLAMA3_PARAMS = {"scaling": "llama3", "factor": 8.0, "original_max_position": 8192, "low_freq_factor": 1.0,
                 "high_freq_factor": 4.0, "base": 500000.0}  # fmt: skip


def test_a_failing_diagnosis_of_a_long_table_holds_no_whole_table_copies() -> None:
    """An unscaled cos | sin pair against llama3's (nothing explains it): the diagnosis held two float64 copies of
    the tables at once (|A − B| and its comparison, a slope product per row): now the differences go by blocks."""
    import tracemalloc

    from pecli.analysis.diagnosis import Reference, diagnose_difference

    a, b = _pair(8192, 256, base=500000.0), _pair(8192, 256, **LLAMA3_PARAMS)
    reference = Reference("rope", {"base": 500000.0}, parts=("cos", "sin"))
    tracemalloc.start()
    try:
        found = diagnose_difference(a, b, tolerance=1e-6, reference=reference)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == []
    assert peak <= 1.4 * (a.nbytes + b.nbytes), peak / (a.nbytes + b.nbytes)  # was 2.0 × the two tables


def test_the_fitted_base_of_a_cos_sin_pair_regenerates_only_its_cos(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fitted base (tried when nothing else explains B) regenerated both parts at each of its ~400 trial bases;
    the cos alone holds every frequency: half the tables (a failing 4096 × 256 diagnosis: 1.5 s → 1.0 s CPU)."""
    import pecli.analysis.diagnosis._regenerate as regenerate
    from pecli.analysis.diagnosis import Reference
    from pecli.analysis.diagnosis._variants_base import any_base_findings
    from pecli.analysis.diagnosis.finding import per_row
    from pecli.schemes import get_scheme

    reference = Reference("rope", {"base": 500000.0}, parts=("cos", "sin"))
    a, b = _pair(1024, 64, base=500000.0), _pair(1024, 64, base=707.1)
    parts: list[object] = []
    encode = regenerate.encode

    def counted(*args: object, **params: object) -> object:
        parts.append(params.get("part"))
        return encode(*args, **params)  # type: ignore[arg-type]

    monkeypatch.setattr(regenerate, "encode", counted)
    mistakes = get_scheme("rope").known_mistakes(reference.params)
    found = list(any_base_findings(a, b, per_row(1e-9, b.shape), reference, mistakes))
    assert [(f.code, f.figures["b_base"]) for f in found] == [("base_differs", 707.1)]
    fitted = parts.index("sin")  # the fit's trial bases, then the roundest base's checks regenerate the pair
    assert fitted > 300 and parts[:fitted] == ["cos"] * fitted  # was cos, sin at each trial base


def test_gemma3_full_attention_pair_in_float16_with_cos_and_sin_swapped_is_named() -> None:
    """Gemma 3's full_attention table (linear factor 8, base 1e6) as float16 cos | sin, cos and sin swapped: its
    slow columns round to 1 and 0 alike, so the column matching found another reordering than the halves' swap
    ("the columns are permuted: [256, 257, …]"); a named reordering that reproduces B is preferred."""
    from pecli.analysis.diagnosis import Reference, diagnose_difference

    params = {"base": 1e6, "scaling": "linear", "factor": 8.0}
    a = _pair(1024, 512, **params).astype(np.float32).astype(np.float64)  # generate's float32 tables
    b = np.hstack([a[:, 256:], a[:, :256]]).astype(np.float16).astype(np.float64)  # the engine's, in float16
    assert [f.code for f in diagnose_difference(a, b, tolerance=1e-3)] == ["flip_sin_to_cos"]
    reference = Reference("rope", params, parts=("cos", "sin"))
    found = diagnose_difference(a, b, tolerance=1e-3, reference=reference)
    assert [f.code for f in found][:1] == ["parts_swapped"]
    assert found[0].figures["permutation"] == [*range(256, 512), *range(256)]
