"""Session 11 (issue 30): the Python API's answers are true and its refusals name the parameter.

TimestepEmbedding is differentiable in t as diffusers' get_timestep_embedding is; rotary_spec checks
its values when built; the API's shared argument checks live in pecli.arguments (no private imports).
"""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import pecli
from pecli.errors import ParameterError
from pecli.probe import rotary_spec
from pecli.testing import assert_rotary_matches, assert_table_matches

torch = pytest.importorskip("torch")
from pecli.torch import SinusoidalPositionalEncoding, TimestepEmbedding  # noqa: E402

TIMES = [0.0, 0.5, 3.7, 998.39, -2.0]


@pytest.mark.parametrize(
    ("dim", "options"),
    [
        (8, {}),  # latent-diffusion: [cos | sin], shift 0
        (7, {"flip_sin_to_cos": False, "freq_shift": 1.0}),  # diffusers' default, odd: a zero column
        (6, {"scale": 3.0, "max_period": 100.0}),
        (5, {"repeat_only": True}),
        (1, {}),  # the padding column alone: a zero gradient
    ],
)
def test_timestep_embedding_gradient_is_the_derivative_of_its_values(dim, options):
    module = TimestepEmbedding(dim, dtype="float64", **options)
    times = torch.tensor(TIMES, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(module, (times,))
    assert torch.autograd.gradgradcheck(module, (times,))  # a continuous-time loss may need d²E/dt²


def test_timestep_embedding_gradient_matches_diffusers():
    embeddings = pytest.importorskip("diffusers.models.embeddings")
    times = torch.tensor([0.0, 0.5, 3.7, 998.39], requires_grad=True)
    weights = torch.randn(4, 9, generator=torch.Generator().manual_seed(0))
    theirs = embeddings.get_timestep_embedding(times, 9)  # flip off, shift 1, float32
    (expected,) = torch.autograd.grad((theirs * weights).sum(), times)
    ours = TimestepEmbedding(9, flip_sin_to_cos=False, freq_shift=1.0)(times)
    (gradient,) = torch.autograd.grad((ours * weights).sum(), times)
    assert gradient.dtype == torch.float32
    # diffusers' angles are float32 (t·ω rounded: 998.39·1 off by ~3e-5 rad); ours are float64
    torch.testing.assert_close(gradient, expected, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-4)


def test_timestep_embedding_values_do_not_depend_on_requires_grad():
    module = TimestepEmbedding(16)
    plain = module(torch.tensor(TIMES))
    tracked = module(torch.tensor(TIMES, requires_grad=True))
    assert plain.grad_fn is None and tracked.grad_fn is not None
    assert torch.equal(plain, tracked.detach())  # the exact table, rounded once, either way
    expected = pecli.timestep_embedding(np.float32(TIMES), 16, dtype="float32")  # t as the tensor holds it
    assert np.array_equal(tracked.detach().numpy(), expected)


def test_timestep_embedding_gradient_of_a_cosine_column_is_minus_the_sine():
    times = torch.tensor([0.3, 2.0], dtype=torch.float64, requires_grad=True)
    TimestepEmbedding(4, dtype="float64")(times)[:, 0].sum().backward()  # column 0: cos(t·1)
    assert times.grad is not None
    np.testing.assert_allclose(times.grad.numpy(), -np.sin([0.3, 2.0]), rtol=1e-15)


@pytest.mark.parametrize(
    ("reference", "dim", "named"),
    [("rope", 15, r"even dim.*got 15 \(use dim=16\)"), ("rope:base=0", 16, "base must be"),
     ("rope:scaling=yarn,factor=4", 16, "original_max_position")],
)  # fmt: skip
def test_rotary_spec_checks_its_values_when_built(reference, dim, named):
    with pytest.raises(ParameterError, match=named):
        rotary_spec(reference, dim=dim, length=16)
    with pytest.raises(ParameterError, match=named):  # before apply_fn is called
        assert_rotary_matches(lambda q, k, p: pytest.fail("apply_fn called"), reference, dim=dim, length=16)


PYTHON_API = ("api.py", "testing.py", "torch.py", "arguments.py", "probe_check.py")


@pytest.mark.parametrize("module", PYTHON_API)
def test_the_python_api_imports_no_private_names_across_modules(module):
    path = pathlib.Path(pecli.__file__).parent / module
    private = [
        f"{node.module}.{alias.name}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pecli")
        for alias in node.names
        if alias.name.startswith("_") and alias.name != "__version__"
    ]
    assert not private, private


def _pair() -> tuple[np.ndarray, np.ndarray]:
    return tuple(pecli.rope_table(16, 8, part=part, dtype="float32") for part in ("cos", "sin"))  # type: ignore[return-value]


def test_a_path_is_read_by_one_reader_for_compare_and_testing():
    with pytest.raises(ParameterError, match=r"^A is bytes, not a str path"):
        pecli.compare(b"rope", np.zeros((2, 2)))
    with pytest.raises(ParameterError, match=r"^reference is bytes, not a str path"):  # was: "got bytes"
        assert_table_matches(_pair(), b"rope")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"^reference must be a config.json.*got int"):
        assert_table_matches(_pair(), 5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"^source must be a path or a model id, got NoneType"):
        pecli.from_config(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "named"),
    [
        (lambda: pecli.compare(np.zeros((2, 2)), np.ones((2, 2)), exact="no"), "exact must be True or False"),
        (lambda: TimestepEmbedding(8, flip_sin_to_cos="no"), "flip_sin_to_cos must be True or False"),
        (lambda: TimestepEmbedding(8, repeat_only="no"), "repeat_only must be True or False"),
        (lambda: SinusoidalPositionalEncoding(8, 4, batch_first="no"), "batch_first must be True or False"),
        (lambda: pecli.compare(np.zeros((2, 2)), np.zeros((2, 2)), key_b="cos"), "^key_b applies to a file"),
        (lambda: TimestepEmbedding(8)(torch.tensor([1 + 1j])), "timesteps must be real numbers, got torch.complex64"),
        (lambda: TimestepEmbedding(8)(torch.zeros(3, device="meta")), "timesteps is a meta tensor"),
        (lambda: pecli.identify(torch.zeros(8, 8, device="meta")), "table is a meta tensor"),
    ],
)
def test_an_argument_that_would_be_misread_is_refused_by_name(build, named):
    # "no" is truthy: exact="no" compared exactly, flip_sin_to_cos="no" flipped; a complex t lost its imaginary
    # part with a warning; key_b was named key; a meta tensor raised torch's NotImplementedError
    with pytest.raises(ParameterError, match=named):
        build()


def test_a_numpy_bool_is_a_flag():
    module = TimestepEmbedding(4, flip_sin_to_cos=np.bool_(False), dtype="float64")
    np.testing.assert_allclose(module(torch.tensor([0.0])).numpy(), [[0.0, 0.0, 1.0, 1.0]])
