"""The QUEUE-MEM authors' server power measurements (smart-me meter, CSV means).

Source: `Queue-Mem/queue-mem-experiments` @ 28252c0, `scripts/power_measurements_cx7/*_watt.csv`
(copied into this package, `nfpark/energy/data/`, with their source in `data/README.md`),
averaged over the `usage` column exactly as the released `plot.py` does. See `docs/energy.md`.

The means are also embedded below so the model works without the data directory; a test checks
that the embedded constants equal the CSV means.
"""

from __future__ import annotations

import csv
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

ENV_DATA_DIR = "NFPARK_POWER_DATA"
# The authors' CSVs ship inside the package (nfpark/energy/data/).
DEFAULT_DATA_DIR = Path(__file__).resolve().parent / "data"

# File stem -> field of Measurements.
CSV_FILES: dict[str, str] = {
    "idle": "idle_w",
    "nf1K": "nf_full_w",
    "nf64B": "nf_header_w",
    "rdma": "rdma_w",
}


@dataclass(frozen=True)
class Measurements:
    """Mean wall power of one server (1x ConnectX-7 included), W."""

    idle_w: float  # idle server, 29 rows (idle_watt.csv)
    nf_full_w: float  # FastClick LB NF at 100 Gbps of 1500 B packets, 25 rows (nf1K_watt.csv)
    nf_header_w: float  # same NF at 100 Gbps of 64 B packets, 31 rows (nf64B_watt.csv)
    rdma_w: float  # RDMA payload server, 27 rows (rdma_watt.csv); not used by the Table 2 reading
    source: str  # "embedded" or the directory the CSVs were read from


EMBEDDED = Measurements(
    idle_w=197.33482529263026,
    nf_full_w=419.65923310981333,
    nf_header_w=480.60123734356586,
    rdma_w=240.88608825244606,
    source="embedded",
)


def read_usage_mean(path: Path) -> float:
    """Mean of the `usage` column of a `;`-separated smart-me CSV, W."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter=";"))
    if not rows or "usage" not in rows[0]:
        raise ValueError(f"{path}: expected a ';'-separated CSV with a 'usage' column")
    try:
        return statistics.mean(float(r["usage"]) for r in rows)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path}: non-numeric 'usage' value ({err})") from None


def load_dir(data_dir: Path) -> Measurements:
    """Read the four `<stem>_watt.csv` files of `data_dir`."""
    means: dict[str, float] = {}
    for stem, field in CSV_FILES.items():
        path = data_dir / f"{stem}_watt.csv"
        if not path.is_file():
            raise ValueError(f"power data: {path} not found (need {stem}_watt.csv in {data_dir})")
        means[field] = read_usage_mean(path)
    return Measurements(source=str(data_dir), **means)


def resolve(data_dir: str | Path | None = None) -> Measurements:
    """Measurements from `data_dir`, else $NFPARK_POWER_DATA, else the package's data directory.

    An explicitly named directory (argument or environment) must exist. The default directory
    may be absent, in which case the embedded constants are used.
    """
    explicit = data_dir if data_dir is not None else os.environ.get(ENV_DATA_DIR)
    if explicit:
        path = Path(explicit)
        if not path.is_dir():
            raise ValueError(f"power data directory {path} does not exist")
        return load_dir(path)
    if DEFAULT_DATA_DIR.is_dir():
        return load_dir(DEFAULT_DATA_DIR)
    return EMBEDDED
