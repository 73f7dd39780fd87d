"""`nfpark repro`: reproduce published results with nfpark and plot them next to the paper's.

`registry.REPROS` is the table of entries; each is a `core.Repro` whose `run(quick, out)` writes
OUT/NAME.json (nfpark's numbers and the paper's, side by side, and the commands run) and
OUT/NAME.png (nfpark's result with the paper's numbers overlaid).
"""

from nfpark.repro.core import Context, Panel, Repro, Result, Row, Series
from nfpark.repro.registry import REPROS, by_name

__all__ = ["REPROS", "Context", "Panel", "Repro", "Result", "Row", "Series", "by_name"]
