"""The enrolled library as the planner's catalogue: each entry becomes a pose-free catalogue object
of the workspace description, the way a cell's planner is told what it may meet.

    library = load_library_file("library/cell.json")      # planner_node's library_file
    workspace = with_library(Scene.load("workspace.json"), library)

The simulator builds its published workspace the same way (sim/library.catalogue_workspace).
"""
from __future__ import annotations

import numpy as np

from spatial_manip.errors import ConfigError
from spatial_manip.paths import resolve_user_file
from spatial_manip.perception.attributes import book_size_class
from spatial_manip.scene import Scene, SceneObject
from spatial_manip.workspace.enroll import Library


def load_library_file(text: str) -> Library:
    """The library file a user names (relative: from the working directory, else under config/),
    read and checked whole; a ConfigError saying what is wrong with it (missing, not JSON, not a
    library, an entry without its fields) otherwise, and also when it holds no object."""
    path = resolve_user_file(text)
    try:
        library = Library.load(path)
    except (ValueError, OSError) as e:     # not a library; a folder, unreadable
        raise ConfigError(f"library_file {text!r}: {e}") from e
    if not library.entries:
        raise ConfigError(f"library_file {text!r} ({path}) holds no object: enroll objects into it first "
                          "(spatial-manip enroll --library FILE ...)")
    return library


def with_library(workspace: Scene, library: Library) -> Scene:
    """`workspace` whose catalogue is `library`'s entries: each entry replaces a catalogue object of
    its id (one written into the workspace file before), never an object the workspace has placed
    (a fixture, the object the arm holds); the workspace's other objects stay as they are."""
    placed = {o.id for o in workspace.objects if o.held or not o.extra.get("catalogue")}
    entries = [library_object(e) for e in library.entries.values() if e.id not in placed]
    replaced = {e.id for e in entries}
    return workspace.with_objects([o for o in workspace.objects if o.id not in replaced] + entries)


def library_object(entry) -> SceneObject:
    """A library entry as a catalogue SceneObject (no pose: it must be perceived)."""
    extra = {"catalogue": True, "rgb": list(entry.rgb), "placement": entry.placement, "colours": list(entry.colours),
             "shape": entry.shape, **({"front_signature": entry.front} if entry.has_front and entry.front else {}),
             **({"views": entry_views(entry)} if entry_views(entry) else {})}
    size_class = None
    if entry.category == "book":
        size_class = book_size_class(entry.size_m)
    # `oriented` says the object has a front (the agent's `fronts`), as in the episode's catalogue
    return SceneObject(entry.id, entry.name, entry.category, np.zeros(3), entry.size_m, np.eye(3), entry.has_front,
                       size_class, False, extra)


def entry_views(entry) -> list[dict]:
    """Each enrolled view's size and colour ({"size_m", "rgb"}), when enrolment recorded its
    colours too (entries enrolled turned all the way round, `enroll_turns`); [] otherwise."""
    sizes, rgbs = entry.extra.get("view_sizes") or (), entry.extra.get("view_rgbs") or ()
    if len(sizes) != len(rgbs):
        return []
    return [{"size_m": list(s), "rgb": list(c)} for s, c in zip(sizes, rgbs)]
