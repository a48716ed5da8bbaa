"""What ``pecli info`` shows of a model: a model directory's position tensors (from the headers), and the
positional encoding its config describes (:func:`describe_config`: a config.json, a model directory, a
.gguf or a cached model id) — per layer type the scheme, base, scaling, attention factor, rotary width
and pairing, the layers without one, and warnings for the settings engines read differently.

>>> import json, os, tempfile
>>> import numpy as np
>>> from safetensors.numpy import save_file
>>> model = tempfile.mkdtemp()
>>> save_file({"transformer.wpe.weight": np.zeros((8, 4), np.float32)}, os.path.join(model, "model.safetensors"))
>>> config = {"model_type": "gpt2", "n_positions": 8, "n_embd": 4}
>>> with open(os.path.join(model, "config.json"), "w") as file:
...     _ = file.write(json.dumps(config))
>>> info = describe_model_directory(model)
>>> [tensor.name for tensor in info.tensors], info.settings["scheme"]
(['transformer.wpe.weight'], 'learned')
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from pecli.analysis.stats import itemsize
from pecli.dtypes import format_bytes
from pecli.errors import Message, ParameterError
from pecli.models.directory import ModelTensor, open_model_directory
from pecli.models.rope_layers import nested_rope_keys
from pecli.report import Shown
from pecli.text import printable

__all__ = [
    "ConfigInfo",
    "FileWithEncoding",
    "LayerInfo",
    "ModelInfo",
    "config_warnings",
    "describe_config",
    "describe_file_encoding",
    "describe_model_directory",
    "head_width",
    "holds_weights",
    "is_rotary",
    "rope_part",
]


@dataclass(frozen=True)
class ModelInfo(Shown):
    """A model directory's position tensors and position settings (or the problem reading them)."""

    directory: str
    model_type: Any
    weight_files: list[str]
    tensors: list[ModelTensor]
    #: scheme, preset, params and the config fields read; or ``{"problem": message}``
    settings: dict[str, Any]
    #: the config's positional encoding described (per layer type, warnings), when the config could be read
    description: ConfigInfo | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "model_type": self.model_type,
            "weight_files": self.weight_files,
            "position_tensors": [
                {"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "file": os.path.basename(t.file)}
                for t in self.tensors
            ],
            "position_settings": self.settings,
        } | ({"positional_encoding": self.description.to_json()} if self.description is not None else {})

    def text_lines(self) -> list[str]:
        files, tensors, settings = self.weight_files, self.tensors, self.settings
        model_type = printable(str(self.model_type if self.model_type is not None else "?"))
        lines = [
            f"{printable(self.directory)}: model_type {model_type}, {len(files)} weight file{'s' * (len(files) != 1)}"
        ]
        lines.append(f"position tensors ({len(tensors)}):" if tensors else "position tensors: none among the weights")
        width = max((len(printable(t.name)) for t in tensors), default=0)
        for tensor in tensors:
            size = format_bytes(math.prod(tensor.shape) * itemsize(tensor.dtype))
            file = printable(os.path.basename(tensor.file))
            lines.append(f"  {printable(tensor.name):<{width}}  {list(tensor.shape)}  {tensor.dtype}  {size}  ({file})")
        described = self.description.text_lines()[1:] if self.description is not None else []
        if "problem" in settings:
            # the config's description fails for the same reason: said once
            repeated = self.description is not None and self.description.problem is not None
            return [*lines, f"position settings: {printable(settings['problem'])}", *([] if repeated else described)]
        preset = f" (preset {settings['preset']})" if settings["preset"] else ""
        params = " ".join(f"{k}={printable(str(v))}" for k, v in settings["params"].items() if k != "layout")
        lines.append(f"position settings: {settings['scheme']}{preset}" + (f": {params}" if params else ""))
        lines += [
            f"  config.json {printable(key)} = {printable(str(value)) if value is not None else 'not given'}"
            for key, value in settings["config"].items()
        ]
        keys = next((index for index, line in enumerate(described) if line == "config keys read:"), len(described))
        return lines + described[:keys]  # the keys read are listed above


def holds_weights(path: str) -> bool:
    """Whether model directory ``path`` holds safetensors weights (a config-only download does not)."""
    from pecli.models.directory import INDEX_FILE, SINGLE_FILE

    return any(os.path.isfile(os.path.join(path, name)) for name in (SINGLE_FILE, INDEX_FILE))


def describe_model_directory(path: str) -> ModelInfo:
    """The position tensors (headers only) and the config's position settings of model directory ``path``."""
    from pecli.models import model_encoding

    directory = open_model_directory(path)
    try:
        encoding = model_encoding(directory.config)
        settings: dict[str, Any] = {
            "scheme": encoding.scheme or "learned",
            "preset": encoding.preset,
            "params": encoding.params,
            "config": {key: value for key, value in encoding.provenance.values()},
        }
    except ParameterError as error:
        settings = {"problem": str(error)}
    files = sorted({os.path.basename(file) for file in directory.weight_files.values()})
    description = _describe(path, os.path.join(path, "config.json"), dict(directory.config))
    return ModelInfo(
        path, directory.config.get("model_type"), files, directory.position_tensors(), settings, description
    )


#: what each rope_type's init in transformers 5 reads of its rope parameters (``_compute_*_parameters``
#: and ``_validate_*_rope_parameters``); any other key is ignored there, whatever an engine does with it
_READS = {
    "default": frozenset(),
    "linear": frozenset({"factor"}),
    "dynamic": frozenset({"factor"}),
    "proportional": frozenset({"factor"}),
    "llama3": frozenset({"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}),
    "yarn": frozenset(
        {
            "factor",
            "original_max_position_embeddings",
            "attention_factor",
            "beta_fast",
            "beta_slow",
            "mscale",
            "mscale_all_dim",
            "truncate",
        }
    ),
    "longrope": frozenset(
        {"factor", "original_max_position_embeddings", "attention_factor", "short_factor", "long_factor"}
    ),
}
#: keys every RoPE reads, and those a model's own rotary class reads beside its rope type (transformers'
#: ``ignore_keys_at_rope_validation``: Qwen2-VL's family splits its frequencies by ``mrope_section``)
_ALWAYS_READ = frozenset(
    {"rope_type", "type", "rope_theta", "partial_rotary_factor", "mrope_section", "mrope_interleaved", "interleaved"}
)
#: model types whose transformers config reads ``rotary_dim`` (all others rotate head_dim × partial_rotary_factor)
_READS_ROTARY_DIM = frozenset({"gptj", "codegen"})
#: sub-configs a composite model keeps its text model's settings in (as :mod:`pecli.models.config` reads them)
_SUB_CONFIGS = ("text_config", "language_config", "llm_config", "thinker_config", "decoder_config", "decoder")
#: pecli's scaling parameters as the text shows them, in this order (the rest of the params are not scaling)
_SCALING_SHOWN = ("factor", "original_max_position", "low_freq_factor", "high_freq_factor", "beta_fast",
                  "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate")  # fmt: skip


@dataclass(frozen=True)
class LayerInfo:
    """One layer type's positional encoding (``layer_type`` None: every layer's)."""

    layer_type: str | None
    encoding: Any  #: pecli.models.encoding.ModelEncoding

    def to_json(self) -> dict[str, Any]:
        encoding, params = self.encoding, self.encoding.params
        document: dict[str, Any] = {"layer_type": self.layer_type, "scheme": encoding.scheme or "learned"}
        if not is_rotary(encoding):
            return document | {
                "preset": encoding.preset,
                "params": dict(params),
                "dim": encoding.dim,
                "learned_weight": encoding.learned_weight,
            }
        scaling = {name: params[name] for name in _SCALING_SHOWN if name in params}
        for name in ("short_factor", "long_factor"):
            if name in params:
                scaling[name] = [float(value) for value in str(params[name]).split(",")]
        return document | {
            "base": params.get("base"),
            "scaling": params.get("scaling", "none"),
            "scaling_parameters": scaling,
            "attention_factor": _attention_factor(params),
            "rotary_dim": encoding.dim,
            "head_dim": head_width(encoding),
            # an odd rotary width (GPT-NeoX's int(head·rotary_pct) = 5) turns ⌈5/2⌉ pairs: the table is 6 wide,
            # the factor the config gave is 5 over the head's 10
            "partial_rotary_factor": params.get(
                "partial_rotary_factor", params.get("rotary_dim", encoding.dim) / head_width(encoding)
            ),
            "pairing": _pairing(params),
        }

    def text_lines(self) -> list[str]:
        encoding, document = self.encoding, self.to_json()
        where = "every layer" if self.layer_type is None else f"layer type {printable(self.layer_type)}"
        if not is_rotary(encoding):
            preset = f" (preset {encoding.preset})" if encoding.preset else ""
            params = " ".join(f"{k}={printable(str(v))}" for k, v in encoding.params.items())
            width = f", width {encoding.dim}" if encoding.dim is not None else ""
            weight = f", table in the weights {printable(encoding.learned_weight)}" if encoding.learned_weight else ""
            return [f"{where}: {document['scheme']}{preset}" + (f": {params}" if params else "") + width + weight]
        scaling = document["scaling_parameters"]
        shown = " ".join(f"{name}={_scaling_value(value)}" for name, value in scaling.items())
        partial = document["partial_rotary_factor"]
        return [
            f"{where}: rope, base {_number(document['base'])}, scaling {document['scaling']}"
            + (f": {shown}" if shown else ""),
            f"  attention factor {document['attention_factor']:.10g}"
            + (" (cos and sin are multiplied by it)" if document["attention_factor"] != 1 else ""),
            f"  rotary dims {document['rotary_dim']} of head_dim {document['head_dim']}"
            + (f" (partial rotary {partial:g})" if partial != 1 else "")
            + f", pairing {document['pairing']}",
        ]


def is_rotary(encoding: Any) -> bool:
    """Whether ``encoding`` (a ModelEncoding) is a rotary scheme (its registry entry's kind)."""
    from pecli.schemes.catalog import get_scheme

    return encoding.scheme is not None and get_scheme(encoding.scheme).kind == "rotary"


def _scaling_value(value: Any) -> str:
    if isinstance(value, list):
        return f"[{len(value)} values, {_number(min(value))}…{_number(max(value))}]"
    return _number(value) if isinstance(value, float) else str(value)


def _number(value: float) -> str:
    """A float as a person reads it: ``1000000``, ``0.5``, ``1.368887945``."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.10g}"


def head_width(encoding: Any) -> int:
    """The head width a RoPE encoding's rotary columns are taken from (its provenance's ``dim`` entry)."""
    key, value = encoding.provenance.get("dim", ("", encoding.dim))
    if isinstance(value, str) and "/" in value:  # hidden_size/num_attention_heads
        hidden, heads = value.split("/")
        return int(hidden) // int(heads)
    if key.endswith("rotary_dim") or not isinstance(value, int):
        return int(encoding.dim)
    return value


def _pairing(params: dict[str, Any]) -> str:
    return "adjacent pairs (interleaved)" if params.get("layout") == "interleaved" else "halves (rotate_half)"


def _attention_factor(params: dict[str, Any]) -> float:
    """The factor transformers multiplies cos and sin by, for these pecli rope parameters."""
    from pecli.schemes.rope_scaling import rope_attention_factor

    scaling = params.get("scaling", "none")
    names = ("attention_factor", "mscale", "mscale_all_dim", "original_max_position")
    extra = {name: params[name] for name in names if name in params}
    return float(rope_attention_factor(scaling, params.get("factor"), **extra))


@dataclass(frozen=True)
class ConfigInfo:
    """A config's positional encoding as pecli understands it: per layer type, NoPE layers, notes, warnings."""

    source: str
    config_file: str
    model_type: Any
    length: int | None
    layers: list[LayerInfo]
    nope_layers: list[int]
    notes: list[str]
    warnings: list[str]
    problem: str | None  #: why pecli cannot compute the table, when it cannot
    config: dict[str, Any]  #: the config key -> value pecli read
    #: the config's ``layer_types`` (one per layer), when it lists them
    layer_types: list[str] = field(default_factory=list)
    #: the (sub-)config that holds the rope settings (the text model's, for a composite model)
    settings: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "config_file": self.config_file,
            "model_type": self.model_type,
            "context_length": self.length,
            "layers": [layer.to_json() for layer in self.layers],
            "nope_layers": self.nope_layers,
            "notes": self.notes,
            "warnings": self.warnings,
            "problem": self.problem,
            "config": self.config,
        }

    def text_lines(self) -> list[str]:
        model_type = printable(str(self.model_type if self.model_type is not None else "?"))
        context = f", context {self.length}" if self.length is not None else ""
        lines = [f"{printable(self.config_file)}: model_type {model_type}{context}"]
        if self.problem is not None:
            lines.append(f"positional encoding: {printable(self.problem)}")
        for layer in self.layers:
            lines += layer.text_lines()
        if self.nope_layers:
            shown = ", ".join(map(str, self.nope_layers))
            count = len(self.nope_layers)
            lines.append(f"no positional encoding (NoPE): layer{'s' * (count > 1)} {shown} of the model")
        # a note naming a parameter stays a Message, for the CLI to spell as its flag
        lines += [
            Message("note: " + note.template) if isinstance(note, Message) else f"note: {printable(note)}"
            for note in self.notes
            if "(NoPE)" not in note
        ]
        lines += [f"warning: {printable(warning)}" for warning in self.warnings]
        if self.config:
            lines.append("config keys read:")
            lines += [
                f"  {printable(key)} = {printable(_short(value)) if value is not None else 'not given'}"
                for key, value in self.config.items()
            ]
        return lines


def _short(value: Any) -> str:
    if isinstance(value, list) and len(value) > 4:
        return f"[{len(value)} values]"
    return str(value)


@dataclass(frozen=True)
class FileWithEncoding:
    """A model file's own report (a GGUF file's tensors) followed by the positional encoding its metadata sets."""

    file: Any  #: a :class:`pecli.report.Report` whose JSON is an object
    encoding: ConfigInfo

    def to_json(self) -> dict[str, Any]:
        return dict(self.file.to_json()) | {"positional_encoding": self.encoding.to_json()}

    def text_lines(self) -> list[str]:
        return [*self.file.text_lines(), *self.encoding.text_lines()[1:]]  # its first line names the file again


def describe_file_encoding(path: str, file_report: Any) -> Any:
    """``file_report`` with the positional encoding of GGUF file ``path`` appended, or as it is when the
    file's metadata sets none pecli reads (a file of learned position embeddings: its tensors say it all).
    Settings that are there but wrong (a NaN base, a factor tensor of the wrong length) are its problem."""
    from pecli.errors import PecliError
    from pecli.models.gguf import GGUFWithoutSettings

    try:
        return FileWithEncoding(file_report, describe_config(path))
    except GGUFWithoutSettings:
        return file_report
    except PecliError as error:
        return FileWithEncoding(file_report, ConfigInfo(path, path, None, None, [], [], [], [], str(error), {}))


def describe_config(source: str) -> ConfigInfo:
    """The positional encoding of a config.json, a model directory, a .gguf file or a cached model id.

    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "config.json")
    >>> with open(path, "w") as file:
    ...     json.dump({"model_type": "llama", "head_dim": 64, "max_position_embeddings": 4096,
    ...                "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
    ...                                    "original_max_position_embeddings": 1024}}, file)
    >>> info = describe_config(path)
    >>> layer = info.to_json()["layers"][0]
    >>> layer["scaling"], round(layer["attention_factor"], 6), layer["rotary_dim"]
    ('yarn', 1.138629, 64)
    """
    from pecli.models.config import read_config
    from pecli.models.hub_cache import is_model_id, resolve_model_id

    path = resolve_model_id(source) if is_model_id(source) and not source.lower().endswith(".gguf") else source
    config_file = os.path.join(path, "config.json") if os.path.isdir(path) else path
    return _describe(source, config_file, dict(read_config(path)))


def _describe(source: str, config_file: str, config: dict[str, Any]) -> ConfigInfo:
    from pecli.models.config import model_encoding

    warnings = config_warnings(config)
    try:
        encoding = model_encoding(config, source=config_file)
    except ParameterError as error:
        return ConfigInfo(source, config_file, config.get("model_type"), None, [], [], [], warnings, str(error), {})
    layers = [LayerInfo(name, layer) for name, layer in encoding.layers] or [LayerInfo(encoding.layer_type, encoding)]
    part = rope_part(config)[1]
    types = part.get("layer_types")
    layer_types = [name for name in types if isinstance(name, str)] if isinstance(types, list) else []
    from pecli.models.gguf import GGUF_KEYS

    gguf_names = config.get(GGUF_KEYS, {})  # a .gguf's settings: named by their GGUF keys
    read: dict[str, Any] = {}
    for layer in layers:
        read.update({gguf_names.get(key, key): value for key, value in layer.encoding.provenance.values()})
    warnings += _refused_tables(layers, config_file)
    notes: list[str] = list(encoding.notes)
    length_key, length = layers[0].encoding.provenance.get("length", ("", 0))
    if isinstance(length_key, str) and length_key and length is None:  # absent: said so, never "None"
        notes.append(Message(f"{length_key} is not given: {{length}} gives the table's length"))
    return ConfigInfo(
        source,
        config_file,
        config.get("model_type"),
        encoding.length,
        layers,
        list(encoding.nope_layers),
        notes,
        warnings,
        None,
        read,
        layer_types,
        part,
    )


def rope_part(config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The (sub-)config that holds the text model's rope settings, and its prefix (``text_config.``).

    >>> rope_part({"model_type": "llava", "text_config": {"rope_theta": 10000.0}})
    ('text_config.', {'rope_theta': 10000.0})
    """
    from pecli.models.rope_config import has_rope

    model_type = config.get("model_type")
    if has_rope(config, model_type if isinstance(model_type, str) else ""):
        return "", config
    for key in _SUB_CONFIGS:
        if isinstance(config.get(key), dict):
            prefix, part = rope_part(config[key])
            return f"{key}.{prefix}", part
    return "", config


def _refused_tables(layers: list[LayerInfo], config_file: str) -> list[str]:
    """Each layer's settings that generate, compare and plot refuse (a base of 1 or less, a factor past the last
    position a model is run at, an attention factor float32 cannot hold), found by the scheme's own check of the
    table's first row and named by their config fields: info still describes the config as it is written."""
    from pecli.models.from_config import _blamed_on_config
    from pecli.schemes.spec import TableSpec

    refused: list[str] = []
    for layer in layers:
        encoding = layer.encoding
        if encoding.scheme is None:  # learned positions: a weight, nothing to compute
            continue
        try:
            TableSpec.resolve(encoding.scheme, encoding.preset, encoding.params, length=encoding.length or 1,
                              dim=encoding.dim, dtype="float64").check()  # fmt: skip
        except ParameterError as error:
            blamed = _blamed_on_config(error, dict(encoding.fields), "")
            if blamed is error:  # not a value the config sets (the caller's length, say)
                continue
            text = f"{blamed.message.removeprefix(': ')}: generate, compare and plot refuse this table"
            if text not in refused:
                refused.append(text)
    return refused


def config_warnings(config: dict[str, Any]) -> list[str]:
    """What engines get wrong in ``config``: settings transformers ignores or reads otherwise than they look.

    >>> config_warnings({"model_type": "deepseek_v3", "qk_rope_head_dim": 64, "max_position_embeddings": 163840,
    ...     "rope_scaling": {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
    ...                      "original_max_position_embeddings": 4096}})[1][:56]
    'rope_scaling.mscale = rope_scaling.mscale_all_dim = 1.0:'
    """
    from pecli.schemes.rope_scaling import MSCALE_ALONE, rope_attention_factor

    prefix, part = rope_part(config)
    model_type = part["model_type"] if isinstance(part.get("model_type"), str) else ""
    warnings: list[str] = []
    for name, settings in _rope_parameter_sets(part):
        at = f"{prefix}{name}."
        rope_type = settings.get("rope_type", settings.get("type", "default"))
        if "type" in settings and "rope_type" not in settings:
            warnings.append(
                f"{at}type = {rope_type!r} is the legacy name of rope_type: engines that read only rope_type "
                "apply default RoPE"
            )
        if not isinstance(rope_type, str) or rope_type not in _READS:  # a wrong one is refused where it is read
            continue
        ignored = [key for key in settings if key not in _READS[rope_type] | _ALWAYS_READ]
        if ignored:
            keys = ", ".join(at + key for key in ignored)
            them = "them" if len(ignored) > 1 else "it"
            warnings.append(f"{keys}: transformers' {rope_type} RoPE never reads {them}")
        if rope_type != "yarn":
            continue
        factor = _yarn_factor(settings, part)
        if "factor" not in settings:  # _validate_yarn_rope_parameters: factor is a required key (null is allowed)
            from pecli.models.transformers_families import TRANSFORMERS_VERSION

            derived = f" = {factor:g}" if factor is not None else ""
            warnings.append(
                f"{at}factor is absent: transformers {TRANSFORMERS_VERSION} refuses a yarn config without it "
                f"(KeyError: missing required keys); pecli reads factor as max_position_embeddings / "
                f"original_max_position_embeddings{derived}, as transformers does for factor: null"
            )
        mscale, all_dim = settings.get("mscale"), settings.get("mscale_all_dim")
        given = settings.get("attention_factor")
        if not all(value is None or _is_number(value) for value in (mscale, all_dim, given)):
            continue  # a value that is no number is refused where it is read, not computed with here
        if given is not None and (mscale or all_dim):
            computed = rope_attention_factor("yarn", factor, mscale=mscale, mscale_all_dim=all_dim) if factor else 1.0
            warnings.append(
                f"{at}attention_factor = {given!r} overrides mscale/mscale_all_dim: transformers multiplies cos and "
                f"sin by {given!r}, engines that compute it from mscale by {computed:.10g}"
            )
        elif mscale and all_dim and mscale == all_dim and factor:
            alone = rope_attention_factor("yarn", factor, mscale=mscale, mscale_all_dim=None)
            warnings.append(
                f"{at}mscale = {at}mscale_all_dim = {mscale!r}: the attention factor cancels to 1 (transformers); "
                f"an engine with {MSCALE_ALONE} multiplies cos and sin by {alone:.10g}"
            )
        elif bool(mscale) != bool(all_dim) and given is None and factor:
            lone = "mscale" if mscale else "mscale_all_dim"
            warnings.append(
                f"{at}{lone} without its pair is ignored by transformers: attention factor 0.1·ln(factor) + 1 = "
                f"{rope_attention_factor('yarn', factor):.10g}"
            )
    warnings += _rotary_dim_warnings(prefix, part, model_type)
    return warnings


def _rope_parameter_sets(config: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each set of rope parameters and the key it sits under (``rope_parameters.full_attention``): per layer type
    only where transformers nests them (``nested_rope_keys``); a flat set with an object among its values is flat.
    """
    for container in ("rope_parameters", "rope_scaling"):
        settings = config.get(container)
        if not isinstance(settings, dict) or not settings:
            continue
        keys = nested_rope_keys({**config, "rope_parameters": settings})
        if keys:
            return [(f"{container}.{name}", settings[name]) for name in keys if isinstance(settings[name], dict)]
        return [(container, settings)]
    return []


def _yarn_factor(settings: dict[str, Any], config: dict[str, Any]) -> float | None:
    """YaRN's factor as transformers takes it: the given one, else max_position_embeddings / original."""
    factor, original = settings.get("factor"), settings.get("original_max_position_embeddings")
    if _is_number(factor):
        return float(factor)
    length = config.get("max_position_embeddings")
    return float(length / original) if _is_number(length) and _is_number(original) and original > 0 else None


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _rotary_dim_warnings(prefix: str, config: dict[str, Any], model_type: str) -> list[str]:
    """``rotary_dim`` against the width transformers rotates: head_dim × partial_rotary_factor."""
    rotary = config.get("rotary_dim")
    if not _is_number(rotary):
        return []
    widths = ("head_dim", "attention_head_dim", "kv_channels")
    head = next((config[key] for key in widths if _is_number(config.get(key))), None)
    hidden, heads = config.get("hidden_size"), config.get("num_attention_heads")
    if head is None and _is_number(hidden) and _is_number(heads) and heads > 0:
        head = hidden // heads
    sets = _rope_parameter_sets(config)
    partial = (sets[0][1] if sets else {}).get("partial_rotary_factor", config.get("partial_rotary_factor"))
    if not _is_number(head):
        return []
    if _is_number(partial):
        if not math.isfinite(head * partial):  # absurd sizes are refused where they are read
            return []
        rotated = int(head * partial)
        if rotated != rotary:
            return [
                f"{prefix}rotary_dim = {rotary} contradicts {prefix}partial_rotary_factor = {partial!r} × head_dim "
                f"{head} = {rotated} rotary columns: transformers rotates {rotated} (huggingface/transformers#48486)"
            ]
        return []
    if model_type not in _READS_ROTARY_DIM and rotary != head:
        return [
            f"{prefix}rotary_dim = {rotary}: transformers' {model_type or 'model'} never reads it and rotates all "
            f"{head} columns of the head; pecli follows rotary_dim"
        ]
    return []
