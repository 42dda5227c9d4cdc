"""Trails and overheads: the history of comparable cells, their A/B results and change points."""
