"""Session 6 attack on pecli resample: a bfloat16 model directory copied with --in-checkpoint, and the hf
convention checked live against the transformers models docs/resample.md names (ViT, DeiT, Dinov2, CLIP, SigLIP)."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.analysis.resample import CONVENTIONS, resample_grid
from tests.conftest import require_module, run_pecli

KEY = "embeddings.position_embeddings"


def _tiny_vit(torch, transformers, dtype):
    config = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=16, num_hidden_layers=1,
                                    num_attention_heads=2, intermediate_size=16)  # fmt: skip
    torch.manual_seed(0)
    model = transformers.ViTModel(config).eval()
    with torch.no_grad():
        model.embeddings.position_embeddings.normal_()
    return model.to(dtype)


@pytest.mark.parametrize(("dtype_name", "tolerance"), [("float32", 1e-5), ("bfloat16", 0.04)])
def test_model_directory_copy_keeps_dtype_and_equals_interpolate_pos_encoding(tmp_path, dtype_name, tolerance):
    # the old code took the dtype numpy holds a bfloat16 tensor in (float32) and refused the copy
    torch = require_module("torch")
    transformers = require_module("transformers")
    safetensors_torch = require_module("safetensors.torch")
    dtype = getattr(torch, dtype_name)
    model = _tiny_vit(torch, transformers, dtype)
    model.save_pretrained(tmp_path / "vit")
    result = run_pecli("resample", str(tmp_path / "vit"), "--key", KEY, "--grid", "6x6", "--convention", "hf",
                       "--in-checkpoint", "-o", str(tmp_path / "vit48"))  # fmt: skip
    assert result.code == 0, result.stderr
    before = safetensors_torch.load_file(str(tmp_path / "vit" / "model.safetensors"))
    after = safetensors_torch.load_file(str(tmp_path / "vit48" / "model.safetensors"))
    assert set(before) == set(after)
    assert after[KEY].dtype == dtype and tuple(after[KEY].shape) == (1, 37, 16)
    for name in before:
        if name != KEY:
            assert after[name].dtype == before[name].dtype
            assert torch.equal(after[name].view(torch.uint8), before[name].view(torch.uint8)), name
    copy, info = transformers.ViTModel.from_pretrained(str(tmp_path / "vit48"), image_size=48, dtype=dtype,
                                                       output_loading_info=True)  # fmt: skip
    assert not any(info.values()), info
    pixels = torch.randn(2, 3, 48, 48, generator=torch.Generator().manual_seed(1)).to(dtype)
    with torch.no_grad():
        expected = model(pixels, interpolate_pos_encoding=True).last_hidden_state.float()
        got = copy.eval()(pixels).last_hidden_state.float()
    # float32: float32 noise; bfloat16: one bfloat16 step (torch rounds float32 to bfloat16, pecli float64 once)
    assert float((got - expected).abs().max()) <= tolerance


MODELS = [  # module, embeddings class, config class, prefix tokens, attribute of the table
    ("deit", "DeiTEmbeddings", "DeiTConfig", 2, "position_embeddings"),
    ("dinov2", "Dinov2Embeddings", "Dinov2Config", 1, "position_embeddings"),
    ("clip", "CLIPVisionEmbeddings", "CLIPVisionConfig", 1, "position_embedding"),
    ("siglip", "SiglipVisionEmbeddings", "SiglipVisionConfig", 0, "position_embedding"),
]


@pytest.mark.parametrize(("size", "new"), [((5, 5), (9, 13)), ((9, 9), (4, 6))])
@pytest.mark.parametrize("model", MODELS, ids=[m[0] for m in MODELS])
def test_hf_convention_equals_each_models_interpolate_pos_encoding(model, size, new):
    torch = require_module("torch")
    transformers = require_module("transformers")
    module, embeddings_class, config_class, prefix, attribute = model
    config = getattr(transformers, config_class)(hidden_size=6, image_size=size[0] * 2, patch_size=2,
                                                 num_channels=3, num_attention_heads=1)  # fmt: skip
    embeddings = getattr(getattr(transformers.models, module), f"modeling_{module}").__dict__[embeddings_class](config)
    with torch.no_grad():
        parameter = getattr(embeddings, attribute)
        parameter = parameter.weight if hasattr(parameter, "weight") else parameter
        parameter.normal_(generator=torch.Generator().manual_seed(3))
        table = parameter.numpy().copy()
        tokens = torch.zeros(1, prefix + new[0] * new[1], 6)
        expected = embeddings.interpolate_pos_encoding(tokens, new[0] * 2, new[1] * 2).numpy().reshape(-1, 6)
    hf = CONVENTIONS["hf"]
    ours = resample_grid(table, new, prefix_tokens=prefix, method=hf.method, antialias=hf.antialias).reshape(-1, 6)
    np.testing.assert_allclose(ours, expected, atol=2e-5, rtol=0)
