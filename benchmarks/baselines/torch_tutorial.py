"""Baseline: the PyTorch tutorial's PositionalEncoding table (float32 angles), saved with safetensors.torch.

The table code follows the "Language Modeling with nn.Transformer" tutorial
(pytorch/tutorials, beginner_source/transformer_tutorial.py).
"""

import math
import sys

import torch
from safetensors.torch import save_file

length, dim, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
position = torch.arange(length).unsqueeze(1)
div_term = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
pe = torch.zeros(length, dim)
pe[:, 0::2] = torch.sin(position * div_term)
pe[:, 1::2] = torch.cos(position * div_term)
save_file({"pe": pe}, path)
