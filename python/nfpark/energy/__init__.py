"""QUEUE-MEM's power model (App. A) and an nfpark deployment estimate. See docs/energy.md."""

from nfpark.energy.measurements import EMBEDDED, Measurements
from nfpark.energy.model import LABELS, SYSTEMS, SystemPower, compute
from nfpark.energy.params import Params, Reading, defaults, resolve, with_overrides

__all__ = ["EMBEDDED", "LABELS", "SYSTEMS", "Measurements", "Params", "Reading", "SystemPower",
           "compute", "defaults", "resolve", "with_overrides"]
