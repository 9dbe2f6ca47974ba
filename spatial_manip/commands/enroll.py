"""`spatial-manip enroll`: measure one object standing alone in the cell into the object library.

    spatial-manip enroll --library config/library/lab.json --workspace config/workspace.json \\
        --ros --calibration config/calibration/cell.yaml --name "teddy bear" --front --overlay bear.png
    spatial-manip enroll --library lab.json --remove "teddy bear"
    spatial-manip enroll ... --ros --views 3 --name "white bowl"   # turned a little between three looks
    spatial-manip enroll --library /tmp/lib.json --sim teddy_bear      # one asset alone in MuJoCo
    spatial-manip enroll --library config/library/sim_assets.json --sim all   # every asset the generator places

The workspace file says what the cell's fixtures are; everything else in view is the object. Its
size (oriented box), colour signature and shape class are measured; re-enrolling a name replaces
its entry. One view hides an object's back: with `--views N` (`--ros`) the person turns the object a
little where it stands between N looks, and with `--turned NPZ` (offline) further saved views are
added; each side of the size is then the views' median (workspace/enroll.fused_views), everything
else the first view's, in which the object was set down as said. `--sim` places the object in MuJoCo's cell (names, categories and fronts from the
asset list; each object with a front is set down facing the camera), measures it from where the
benchmark stands its camera in three turns (sim/library.py) and prints the fused measurement's
error against the asset's true size.
"""
from __future__ import annotations

import argparse

import numpy as np
from PIL import Image

from spatial_manip.scene import Scene, SceneObject
from spatial_manip.geometry.calibration import load_calibration
from spatial_manip.commands.cell_look import add_source_arguments, observation_from_args
from spatial_manip.overlay import draw_overlay
from spatial_manip.sim.library import enroll_sim, enrollable_keys, measured_extents, true_extents
from spatial_manip.workspace import sources
from spatial_manip.workspace.enroll import FACINGS, Library, fused_views, measure_object

SIM_ALL = "all"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--library", required=True, metavar="JSON", help="the library file to write (created if missing)")
    p.add_argument("--remove", metavar="NAME", help="remove this object from the library and stop")
    p.add_argument("--workspace", metavar="JSON", help="the cell's workspace file (capture-workspace --out)")
    p.add_argument("--name", help="what people call the object: the word instructions use")
    p.add_argument("--category", default="object", help="its category (book, reference, object ...; default object)")
    p.add_argument("--front", dest="front", action="store_true", default=False,
                   help="the object has a front (a clock, a bust); --no-front (default) when not")
    p.add_argument("--no-front", dest="front", action="store_false", help="the object has no front (the default)")
    p.add_argument("--facing", choices=FACINGS, default="camera",
                   help="with --front: which way the object was set down facing, as the camera sees it (default "
                        "camera); its front signature lets perception tell which way it faces in a scene")
    p.add_argument("--views", type=int, default=1, metavar="N",
                   help="--ros: look N times, the object turned a little (about 30 degrees) where it stands between "
                        "looks; each side of its size is the views' median (default 1)")
    p.add_argument("--turned", action="append", default=[], metavar="NPZ",
                   help="offline: another saved observation of the same object turned where it stands (repeatable)")
    p.add_argument("--overlay", metavar="PNG", help="write the image with the measured box, size and colours")
    # not required: --remove needs no look
    add_source_arguments(p, required=False, sim={
        "metavar": "ASSET", "help": "place ASSET alone in MuJoCo's cell (book:SIZE:COLOUR for a book; "
                                    "'all' for every asset the generator places)"})


def run(args) -> int:
    library = Library.load(args.library, missing_ok=True)
    if args.remove:
        gone = library.remove(args.remove)
        library.save(args.library)
        print(f"removed {gone.name} ({gone.id}) from {args.library}; {len(library.entries)} objects left")
        return 0
    if args.sim:
        return _run_sim(args, library)
    if not (args.observation or args.bag or args.ros):
        raise ValueError("say where the image comes from: --ros, --bag BAG, --observation NPZ or --sim ASSET")
    if not args.workspace or not args.name:
        raise ValueError("enrolling from the camera needs --workspace FILE (the cell's fixtures) and --name "
                         "(what the object is called)")

    _check_views(args)
    workspace = Scene.load(args.workspace)
    first = observation_from_args(args)
    looks = [first] + [_next_view(args, k) for k in range(1, args.views)]
    calibration = load_calibration(args.calibration) if args.calibration and args.turned else None
    looks += [sources.load_observation(path, calibration) for path in args.turned]
    views = [measure_object(obs, workspace, name=args.name, category=args.category, has_front=args.front,
                            facing=args.facing, seed=args.seed) for obs in looks]
    _store(args, library, fused_views(views), first)
    return 0


def _check_views(args) -> None:
    if args.views < 1:
        raise ValueError(f"--views must be at least 1 (looks at the object), got {args.views}")
    if args.views > 1 and not args.ros:
        raise ValueError(f"--views {args.views} turns the object between live looks and needs --ros; offline, "
                         "name the other saved views with --turned NPZ")


def _next_view(args, k: int):
    """The k-th live look, after the person has turned the object where it stands."""
    input(f"turn the {args.name} a little (about 30 degrees) where it stands, then press Enter "
          f"(view {k + 1} of {args.views}) ")
    return observation_from_args(args)


def _run_sim(args, library) -> int:
    keys = enrollable_keys() if args.sim == SIM_ALL else [args.sim]
    worst = 0.0
    print(f"{'asset':<26} {'measured L x W x H (cm)':<24} {'true (cm)':<20} {'error':>7}  colours / shape")
    for key in keys:
        m, obs, obj = enroll_sim(key, seed=args.seed, depth_noise=not args.no_noise)
        err = measured_extents(m.entry.size_m) - true_extents(obj)
        worst = max(worst, float(np.max(np.abs(err))))
        library.put(m.entry)
        print(f"{key:<26} {_cm(measured_extents(m.entry.size_m)):<24} {_cm(true_extents(obj)):<20} "
              f"{100 * float(np.max(np.abs(err))):5.1f}cm  {'/'.join(m.entry.colours)} {m.entry.shape}"
              f"{' ' + m.entry.placement if m.entry.placement != 'near' else ''}")
        if args.overlay and len(keys) == 1:
            _write_overlay(args.overlay, obs, m)
    library.save(args.library)
    print(f"{len(keys)} enrolled (depth noise {'off' if args.no_noise else 'on'}, seed {args.seed}); "
          f"largest size error {100 * worst:.1f} cm; {len(library.entries)} objects in {args.library}")
    return 0


def _cm(extents) -> str:
    return " x ".join(f"{100 * v:.1f}" for v in extents)


def _store(args, library, m, obs) -> None:
    e = m.entry
    replaced = library.put(e)
    library.save(args.library)
    print(f"{'re-enrolled' if replaced else 'enrolled'} {e.name} ({e.id}): {_cm(e.size_m)} cm, "
          f"{'/'.join(e.colours)}, {e.shape}, {e.placement}"
          f"{' (seen in part: its size is a lower bound, enroll it again in full view)' if e.extra.get('truncated') else ''}"
          f" -> {args.library}")
    if args.overlay:
        _write_overlay(args.overlay, obs, m)


def _write_overlay(path: str, obs, m) -> None:

    img = obs.rgb.copy()
    img[m.mask] = (0.5 * img[m.mask] + 0.5 * np.array([0, 255, 0])).astype(img.dtype)     # its pixels, tinted
    e = m.entry
    label = f"{e.name}: {_cm(e.size_m)} cm {'/'.join(e.colours)} {e.shape}"
    box = SceneObject(label, e.name, e.category, m.box.center, m.box.size, m.box.rotation)
    Image.fromarray(draw_overlay(img, obs.T_base_cam, obs.intrinsics, objects=[box])).save(path)
    print(f"overlay written to {path}")
