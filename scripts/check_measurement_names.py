#!/usr/bin/env python3
"""Every raw file under docs/measurements/ follows the folder's naming rule.

The rule (docs/measurements/README.md): <topic>/<date>_<device>[-<part>].<ext>
  topic   one folder per topic: lowercase letters, digits, dots and hyphens
  date    YYYY-MM-DD, the day of the device call
  device  lowercase letters and digits: h100, h100x2 (two), h200, cpu (the development machine)
  part    optional: lowercase words, digits or a commit, hyphen-joined, naming one of a
          call's several files (2026-11-27_h100-ncu-step.csv, 2026-11-27_cpu-layers.json)
  ext     json, txt, csv, md, png or svg
and nothing else: no deeper folders, no file beside README.md at the top. Prints each file
that breaks it, with the part that does; exit 1 if any.

usage: check_measurement_names.py [MEASUREMENTS_DIR]   (default: docs/measurements)
"""
import re
import sys
from pathlib import Path

TOPIC = re.compile(r"[a-z0-9][a-z0-9.]*(-[a-z0-9.]+)*")
FILE = re.compile(r"(?P<date>\d{4}-\d{2}-\d{2})_(?P<device>[a-z0-9]+)(-[a-z0-9]+)*\.(json|txt|csv|md|png|svg)")


def why_not(relative):
    """What in `relative` (a path under the measurements folder) breaks the rule; None if nothing."""
    parts = relative.parts
    if parts == ("README.md",):
        return None
    if len(parts) != 2:
        return "not <topic>/<file>: one folder level, no more, no less"
    topic, name = parts
    if not TOPIC.fullmatch(topic):
        return f"topic folder '{topic}': lowercase letters, digits, dots and hyphens only"
    if not FILE.fullmatch(name):
        return f"'{name}' is not <YYYY-MM-DD>_<device>[-<part>].<json|txt|csv|md|png|svg>"
    return None


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip().splitlines()[-1])
        return 0 if len(argv) == 2 else 2
    root = Path(argv[1]) if len(argv) == 2 else Path(__file__).resolve().parent.parent / "docs" / "measurements"
    files = sorted(path.relative_to(root) for path in root.rglob("*") if path.is_file())
    broken = [(path, why_not(path)) for path in files]
    broken = [(path, why) for path, why in broken if why]
    for path, why in broken:
        print(f"{root.name}/{path}: {why}")
    print(f"{len(files)} files under {root}, {len(broken)} named against the rule")
    return 1 if broken or not files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
