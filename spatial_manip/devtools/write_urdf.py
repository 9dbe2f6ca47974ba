"""Rewrite the URDF/SRDF files of every arm model and camera mount (motion.description builds
them from the DH table control/kinematics.py uses); test_description fails while urdf/ is stale.

    python -m spatial_manip.devtools.write_urdf [--out urdf/]
"""
from __future__ import annotations

import argparse
from pathlib import Path

from spatial_manip.motion.description import REPO_URDF_DIR, write_all


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="write the URDF/SRDF files of every arm model and camera mount")
    p.add_argument("--out", default=str(REPO_URDF_DIR), help="output folder (default: the repository's urdf/)")
    args = p.parse_args(argv)
    for path in write_all(Path(args.out)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
