"""Baseline: the 2048 × 512 sinusoidal table with bare numpy, saved with safetensors.numpy."""

import sys

import numpy as np
from safetensors.numpy import save_file

length, dim, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
position = np.arange(length)[:, None]
inv_freq = np.exp(np.arange(0, dim, 2) * (-np.log(10000.0) / dim))
pe = np.zeros((length, dim), dtype=np.float32)
pe[:, 0::2] = np.sin(position * inv_freq)
pe[:, 1::2] = np.cos(position * inv_freq)
save_file({"pe": pe}, path)
