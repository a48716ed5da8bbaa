"""pecli.testing given what an engine's test might hand it by mistake (issue 30): each is a one-line
ParameterError naming the argument, or an AssertionError whose figures do not contradict each other."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pecli.errors import ParameterError
from pecli.probe import rotary_spec, rotate
from pecli.schemes.rope import rope_table
from pecli.testing import assert_rotary_matches, assert_table_matches

SPEC = rotary_spec("rope", dim=16, length=64)


def _right(q, k, positions):
    return rotate(SPEC, q, positions), rotate(SPEC, k, positions)


def test_a_right_rotation_passes():
    assert_rotary_matches(_right, "rope", dim=16, length=64)


@pytest.mark.parametrize(
    "returned", [lambda q, k: ("a", "b"), lambda q, k: (q + 0j, k), lambda q, k: (q.astype(object), k)]
)
def test_returned_values_that_are_no_real_numbers_are_named(returned):
    """Text was a raw ValueError from numpy, complex values a ComplexWarning and a silent cast."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ParameterError, match="q_rotated must hold real numbers"):
            assert_rotary_matches(lambda q, k, p: returned(q, k), "rope", dim=16, length=64)


def test_a_function_is_required():
    """A non-callable was reported as "missing dim and length", or failed when called."""
    with pytest.raises(ParameterError, match=r"apply_fn must be a function .* got int"):
        assert_rotary_matches(5, "rope", dim=16, length=64)  # type: ignore[arg-type]


def test_nan_from_the_engine_is_counted_not_called_an_infinite_difference():
    """NaN read "max |Δ| inf" beside a search for a convention mistake that cannot make NaN."""

    def nan_q(q, k, positions):
        rotated_q, rotated_k = _right(q, k, positions)
        rotated_q[0, 3, 5] = np.nan
        return rotated_q, rotated_k

    with pytest.raises(AssertionError) as failure:
        assert_rotary_matches(nan_q, "rope", dim=16, length=64)
    text = str(failure.value)
    assert "q_rotated: differs: NaN at 1 of 352 entries (the first at head 0, position" in text
    elsewhere = float(text.split("elsewhere max |Δ| ")[1].split("\n")[0])
    assert elsewhere < 1e-4 and "inf" not in text
    assert "k_rotated: agrees" in text and "the engine's rotation produced NaN" in text


def test_a_complex_pair_is_refused():
    """(cos + 0j, sin) raised a ComplexWarning and was compared after dropping the imaginary part."""
    cos, sin = (rope_table(64, 16, part=part, dtype="float32") for part in ("cos", "sin"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ParameterError, match="a \\(cos, sin\\) pair holds real numbers, got complex64"):
            assert_table_matches((cos + 0j, sin), "rope")


def test_a_table_against_a_scheme_that_does_not_rotate_is_not_told_about_probes():
    cos, sin = (rope_table(64, 16, part=part, dtype="float32") for part in ("cos", "sin"))
    with pytest.raises(ParameterError, match="rotary tables and probes are RoPE's") as refused:
        assert_table_matches((cos, sin), "sinusoidal")
    assert "a probe rotates" not in str(refused.value)


def test_an_empty_table_is_named_not_a_length_the_caller_never_gave():
    """An empty (cos, sin) was "length must be a positive integer, got 0 (pass e.g. length=64)"."""
    cos, sin = (rope_table(64, 16, part=part, dtype="float32") for part in ("cos", "sin"))
    with pytest.raises(ParameterError, match=r"the engine's table is empty \(\(cos, sin\) of shape \(0, 16\)\)"):
        assert_table_matches((cos[:0], sin[:0]), "rope")
