"""Which known convention produced a table? A search over the registry's deterministic schemes.

The sinusoidal family is searched over its layout, sin/cos order, frequency shift (Vaswani's
``None``; 0 as in guided-diffusion; 1 as in tensor2tensor, fairseq and diffusers), a grid of bases
and the first position; RoPE over its layout, part, base and scaling. Bases, first positions and
scalings are also read off the table itself (:mod:`.sinusoids`, :mod:`.rotary`), so an unusual
base or a table cut out of a longer one are found too. Every preset and every other scheme
without a random seed (count, binary, MemN2N…) is tried at its defaults. Random tables match
nothing.

A match is *exact* when its largest error is within the rounding of the table's values,
*approximate* when within the noise of a float32 implementation: row p of a sin/cos convention
may be off by eps32·|p|·ω_max more (:func:`pecli.analysis.compare.arithmetic_tolerance`), a table
of plain numbers (count, binary…) by its rounding only. Among the candidates within that noise
the first in search order wins: presets, then round bases and offsets, then fitted ones.

>>> import pecli
>>> found = identify_table(pecli.encode(None, 64, 32, preset="fairseq"))
>>> found.level, found.best.presets, found.best.params["offset"]
('exact', ('fairseq',), 2)
>>> print(found.recipe())
sinusoidal(preset='fairseq', dim=32, length=64) -> pe.npy
"""

from pecli.analysis.identify.candidates import BASES
from pecli.analysis.identify.pairs import identify_rope_pair
from pecli.analysis.identify.report import IdentifyReport
from pecli.analysis.identify.result import Candidate, Identification, Recipe
from pecli.analysis.identify.search import identify_table

__all__ = ["BASES", "Candidate", "Identification", "IdentifyReport", "Recipe", "identify_rope_pair", "identify_table"]
