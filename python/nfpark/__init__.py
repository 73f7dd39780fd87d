"""nfpark lab: the Python side of nfpark (power model, reproductions, plots).

Users drive it through the C++ `nfpark` command, which forwards verbs it does not know to
`python3 -m nfpark VERB ...`; see `nfpark.cli`.
"""

__version__ = "0.1.0"
