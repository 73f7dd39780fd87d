"""`nfpark dissector install|path`: the Wireshark/tshark dissector for the NF link
(tools/wireshark/nfpark.lua), copied to Wireshark's personal Lua plugin folder."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from nfpark.testbed.net import REPO

SCRIPT = REPO / "tools" / "wireshark" / "nfpark.lua"


def plugin_dir() -> Path:
    """Wireshark's personal Lua plugin folder (`tshark -G folders`: Personal Lua Plugins)."""
    return Path.home() / ".local" / "lib" / "wireshark" / "plugins"


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = verbs.add_parser(
        "dissector", help="install the Wireshark/tshark dissector of nfpark's NF link",
        description="Decodes nfpark's tag, PayloadPark's 7-byte header, QUEUE-MEM's header "
        "fields and NFSlicer's token (docs/testbed.md, Wireshark).")
    p.add_argument("action", choices=("install", "path"),
                   help="install: copy it to Wireshark's personal plugins; path: print it")
    p.set_defaults(run=_run)


def _run(a: argparse.Namespace) -> int:
    if a.action == "path":
        print(SCRIPT)
        return 0
    dest = plugin_dir()
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SCRIPT, dest / SCRIPT.name)
    print(f"installed {dest / SCRIPT.name} (Wireshark and tshark load it at start)")
    return 0
