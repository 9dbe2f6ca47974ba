"""ContactMonitor: unintended contacts of the robot during every motion in a SimWorld (issue #21).

    monitor = ContactMonitor(world)           # samples the world after every physics step
    monitor.reset(allowed_ids={"book_1", "support_1"})   # on each task reset, after world.reset
    monitor.set_phase("approach")             # the arm motion phase now running
    ...
    monitor.counts() -> {"approach": 1, "lift": 0, ...}  # unintended contact EVENTS per phase
    monitor.events() -> [{"phase", "bodies": [robot side, other side], "kind", "time_s", "position"}]
    monitor.close()                           # stop sampling (unregisters the step callback)

What counts. A contact is unintended when one side is the arm, the gripper, or the object held
now (`world.held_object_id()`), and the other side is
  - not the robot itself (any arm or gripper link, the robot's stand) and not the held object:
    self-contacts, the held object against the fingers (or swinging against a wrist link) are
    contacts inside the carried assembly, not with the world;
  - not in `allowed_ids` (the task's target and what it rests on, given at `reset`);
  - not, while placing, a fixture under the held object: in the phases PLACE_CONTACT_PHASES
    ("descend", "open", "retreat") the held object may touch any object of category table,
    shelf or support (what it is being set down on). Touching a book or a reference while
    setting down still counts.
Contacts between two objects the robot does not touch or hold (a pushed book knocking over
another) are not counted: only the robot's own side is monitored.

Events, not steps. A pair (robot part, other body) counts once when it starts touching in an
unintended way, and not again until it has been apart for `separation_s` (0.05 s by default: a
link sliding along a book makes and breaks contact every few steps; that chatter is one event).
The robot part is "arm", "gripper" or "held" (the held object), so two fingers landing on the
same book, or the forearm and wrist sweeping through it, are one event, named by the first link
that touched. A pair that touched while intended and stays touching after it became unintended
(a phase change) counts once, in the phase where it became unintended. Pairs already touching at
the first sample after `reset` (the task's initial state, not any motion's doing) are not
counted until they separate and touch again; likewise the held object's contacts at the moment
it is grasped (the book's own support, touching it already).

Names (the "bodies" of an event). MuJoCo geoms map to scene ids through SimWorld's own naming
(mjcf.py): a book's body "obj:<id>" and every static object's geoms "obj:<id>:<k>" -> "<id>"; the
world's "floor" geom -> "floor"; the robot's stand "robot_stand" -> robot; any other geom of a
robot body -> that body's link name ("wrist_3_link", "gripper_left_pad", ...), classed as
"gripper" or "arm" by SimWorld.robot_parts (the arm's fixed base is "arm" here). The event's
"kind" says which robot side touched: "arm", "gripper" or "held".

Cost: one pass over `data.contact` per physics step in plain Python over per-geom lists built
once per model (about 20 us for ~30 contacts, against ~80 us for the step itself), and the world
then calls mj_step once per physics step instead of once per control period. The callback runs
inside SimWorld's stepping, under the world's lock.
"""
from __future__ import annotations

import math
import threading
from typing import Iterable

import numpy as np

from spatial_manip.scene import SUPPORT_CATEGORIES

PLACE_CONTACT_PHASES = frozenset({"descend", "open", "retreat"})
IDLE_PHASE = "idle"

_ROBOT, _ARM, _GRIPPER, _OBJECT, _ENV = 0, 1, 2, 3, 4


class ContactMonitor:
    def __init__(self, world, *, separation_s: float = 0.05, max_events: int = 500):
        if separation_s < 0 or max_events < 0:
            raise ValueError("separation_s and max_events must be >= 0")
        self.world = world
        self.separation_s = float(separation_s)
        self.max_events = int(max_events)
        self._lock = threading.Lock()
        self._model = None
        self.reset(set())
        with world.lock:
            world.step_callbacks.append(self._on_step)

    # --- public API -----------------------------------------------------------------------------
    def reset(self, allowed_ids: Iterable[str] = ()) -> None:
        """A new task: forget counts and events, take the task's intended contacts, phase 'idle'."""
        if isinstance(allowed_ids, str):
            raise TypeError("allowed_ids must be a collection of scene ids, not one string")
        with self._lock:
            self.allowed_ids = frozenset(str(i) for i in allowed_ids)
            self._phase = IDLE_PHASE
            self._phases: dict[str, int] = {}       # phase -> events, in the order phases were set
            self._events: list[dict] = []
            self._touching: dict[tuple, list] = {}  # pair -> [last touch time, counted in this touch]
            self._baseline = True                   # the next sample's contacts pre-exist
            self._last_held = -1

    def set_phase(self, name: str) -> None:
        with self._lock:
            self._phase = str(name)
            self._phases.setdefault(self._phase, 0)

    @property
    def phase(self) -> str:
        return self._phase

    def counts(self) -> dict[str, int]:
        """Phase -> number of unintended contact events; every phase set since `reset` is listed
        (0 when clean), and 'idle' only when something was touched outside any phase."""
        with self._lock:
            return dict(self._phases)

    def total(self) -> int:
        with self._lock:
            return sum(self._phases.values())

    def events(self) -> list[dict]:
        """The first `max_events` events (counts() keeps counting past that)."""
        with self._lock:
            return [dict(e, bodies=list(e["bodies"]), position=list(e["position"])) for e in self._events]

    def close(self) -> None:
        """Stop sampling (counts and events stay readable)."""
        with self.world.lock:
            if self._on_step in self.world.step_callbacks:
                self.world.step_callbacks.remove(self._on_step)

    # --- sampling -------------------------------------------------------------------------------
    def _index(self) -> None:
        """Per-geom class and name of the world's current model (rebuilt after world.reset)."""
        w = self.world
        m = w.model
        cls = np.full(m.ngeom, _ENV, np.int8)
        names: list[str] = []
        obj_body = {b: oid for oid, b in w._body_of.items()}
        for g in range(m.ngeom):
            b = int(m.geom_bodyid[g])
            gname = m.geom(g).name
            if b in obj_body:
                cls[g], name = _OBJECT, obj_body[b]
            elif b == 0:
                if gname.startswith("obj:"):
                    cls[g], name = _OBJECT, gname.split(":")[1]
                elif gname == "robot_stand":
                    cls[g], name = _ROBOT, "robot_stand"
                else:
                    name = gname or f"geom_{g}"
            else:       # the robot's (world.robot_parts): its fixed base counts as the arm
                cls[g] = _GRIPPER if w.robot_parts[b] == "gripper" else _ARM
                name = m.body(b).name
            names.append(name)
        # plain lists, indexed by geom id (sampling runs in Python: see _held)
        self._cls, self._names = cls.tolist(), names
        self._robot = [int(k) in (_ROBOT, _ARM, _GRIPPER) for k in cls]
        self._moving = [int(k) in (_ARM, _GRIPPER) for k in cls]
        # pad side per geom (0, 1; -1 not a pad), dynamic object index per geom (-1 none)
        pad_bodies = sorted({int(m.geom_bodyid[g]) for g in w._pad_geoms})
        self._pad_side = [pad_bodies.index(int(m.geom_bodyid[g])) if g in w._pad_geoms else -1 for g in range(m.ngeom)]
        self._dyn_ids = sorted(w._body_of)
        self._dyn = [self._dyn_ids.index(obj_body[int(b)]) if int(b) in obj_body else -1 for b in m.geom_bodyid]
        cats = {o.id: o.category for o in w.scene.objects}
        self._fixture = {oid for oid, c in cats.items() if c in SUPPORT_CATEGORIES}  # the floor is no place to set a book down
        self._model = m

    def _held(self, G1: list, G2: list, d) -> int:
        """The object held now, as its index in `_dyn_ids` (-1: none): world.held_object_id()'s
        rule (a book both pads touch), and the two pads squeeze it from opposite sides -- that
        rule alone also names a book both fingertips merely rest on (the gripper pushing down on
        it), which here is a contact of the gripper, not an object in the hand. Plain Python over
        the contact list: this runs on every physics step, where numpy's per-call cost on a few
        dozen contacts is larger than the work."""
        pad_side, dyn = self._pad_side, self._dyn
        normals: dict = {}        # (object, pad side) -> summed normal from the pad into the object
        frame = None
        for i, (a, b) in enumerate(zip(G1, G2)):
            if pad_side[a] >= 0 and dyn[b] >= 0:
                key, sign = (dyn[b], pad_side[a]), 1.0
            elif pad_side[b] >= 0 and dyn[a] >= 0:
                key, sign = (dyn[a], pad_side[b]), -1.0
            else:
                continue
            if frame is None:
                frame = d.contact.frame[:, :3].tolist()
            x, y, z = frame[i]
            s = normals.setdefault(key, [0.0, 0.0, 0.0])
            s[0] += sign * x
            s[1] += sign * y
            s[2] += sign * z
        for (k, side), n1 in normals.items():
            n2 = normals.get((k, 1)) if side == 0 else None
            if n2 is not None:
                dot = n1[0] * n2[0] + n1[1] * n2[1] + n1[2] * n2[2]
                if dot < -0.5 * math.hypot(*n1) * math.hypot(*n2):
                    return k
        return -1

    def _on_step(self, world) -> None:
        d = world.data
        with self._lock:
            if world.model is not self._model:
                self._index()
                self._touching.clear()
                self._baseline = True
            n = int(d.ncon)
            t = float(d.time)
            seen: dict[tuple, tuple] = {}
            held = -1
            if n:
                c = d.contact
                G1, G2, D = c.geom1.tolist(), c.geom2.tolist(), c.dist.tolist()
                held = self._held(G1, G2, d)
                moving, robot, dyn, cls, names = self._moving, self._robot, self._dyn, self._cls, self._names
                for i in range(n):
                    if D[i] > 0.0:
                        continue
                    a, b = G1[i], G2[i]
                    # the robot's side: arm, gripper, held object; never the other side: those and the stand
                    a_mine = moving[a] or (held >= 0 and dyn[a] == held)
                    b_mine = moving[b] or (held >= 0 and dyn[b] == held)
                    if a_mine and not (b_mine or robot[b]):
                        pass
                    elif b_mine and not (a_mine or robot[a]):
                        a, b = b, a
                    else:
                        continue
                    kind = "held" if cls[a] == _OBJECT else ("gripper" if cls[a] == _GRIPPER else "arm")
                    key = (kind, names[b])
                    if key not in seen:
                        seen[key] = (names[a], i)       # the first link to touch, its contact index
            if held != self._last_held:       # just grasped: what it rests on was touching already
                self._last_held = held
                for key in seen:
                    if key[0] == "held":
                        self._touching[key] = [t, True]
            self._update(seen, t, d)

    def _intended(self, kind: str, other: str) -> bool:
        if other in self.allowed_ids:
            return True
        return kind == "held" and self._phase in PLACE_CONTACT_PHASES and other in self._fixture

    def _update(self, seen: dict, t: float, d) -> None:
        if self._baseline:
            self._baseline = False
            self._touching = {k: [t, True] for k in seen}
            return
        for key, (link, i) in seen.items():
            kind, other = key
            state = self._touching.get(key)
            if state is None or t - state[0] > self.separation_s + 1e-12:
                state = self._touching[key] = [t, False]      # a new touch
            state[0] = t
            if not state[1] and not self._intended(kind, other):
                state[1] = True
                self._phases[self._phase] = self._phases.get(self._phase, 0) + 1
                if len(self._events) < self.max_events:
                    self._events.append({"phase": self._phase, "bodies": [link, other], "kind": kind,
                                         "time_s": round(t, 4), "position": np.round(d.contact.pos[i], 4).tolist()})
        # forget pairs apart for longer than separation_s
        for key in [k for k, s in self._touching.items() if k not in seen and t - s[0] > self.separation_s]:
            del self._touching[key]
