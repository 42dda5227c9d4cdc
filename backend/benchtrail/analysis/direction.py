"""Which way a metric is better. The analysis package imports nothing else of ours, so it names the
two values itself; `benchtrail.metrics.Direction` is the same Literal, and mypy treats them as one."""

from typing import Literal

Direction = Literal["lower", "higher"]
