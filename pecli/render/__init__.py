"""Drawing tables: the terminal heatmap (numpy and text only) and image files (matplotlib, Agg).

:mod:`pecli.render.terminal` never imports matplotlib, rich or torch, so ``pecli plot`` in a
terminal starts as fast as numpy does; :mod:`pecli.render.image` imports matplotlib's
object-oriented API (``Figure`` + ``FigureCanvasAgg``, never pyplot). Both shrink large tables
with :func:`pecli.render.downsample.block_average`.
"""
