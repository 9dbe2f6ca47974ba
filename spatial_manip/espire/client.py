"""A client of ESPIRE's protocol (written from its documented behaviour, not ESPIRE's code): the
tests, the benchmark and our own drivers use it to talk to any ESPIRE-protocol server.

    with EspireProtocolClient(server_port=6001, client_port=6000) as c:
        tasks = c.call("GET_TASK_LIST")["tasks"]
        c.call("SET_TASK", task_id=tasks[0]["id"], rotation=[None, None, None])

`ProtocolDriver` plays an episode the way ESPIRE's driver flow does (localize, then move on
highlighted observations, then end); `OracleDriver` clicks the goal box the server draws (the
ceiling: it measures the server and its arm, not a VLM), `RandomClickDriver` random pixels (the
floor).
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

import numpy as np
import zmq
from scipy import ndimage

from spatial_manip.espire import protocol as proto


FLAT_FAMILY_KEY = "place:Orientation/Flat"     # the one place family whose answer lies flat


class EspireReplyError(RuntimeError):
    def __init__(self, kind: str, code: int, info: str):
        super().__init__(f"{kind} failed with {code}: {info}")
        self.kind, self.code, self.info = kind, code, info


class EspireProtocolClient:
    def __init__(self, host: str = "127.0.0.1", server_port: int = 6001, client_port: int = 6000,
                 timeout_s: float = 60.0, sid: str | None = None):
        self.ctx = zmq.Context()
        self.push = self.ctx.socket(zmq.PUSH)
        self.push.setsockopt(zmq.LINGER, 0)
        self.push.connect(f"tcp://{host}:{server_port}")
        self.sub = self.ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.connect(f"tcp://{host}:{client_port}")
        self.sub.setsockopt_string(zmq.SUBSCRIBE, "")
        self.sid = sid or str(uuid.uuid4())
        self.timeout_s = float(timeout_s)
        self.last_obs_uid = ""

    def __enter__(self) -> "EspireProtocolClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.push.close(0)
        self.sub.close(0)
        self.ctx.term()

    def send_raw(self, raw: bytes) -> None:
        self.push.send(raw)

    def receive(self, uid: str | None) -> dict:
        """The next reply whose uid is `uid` (None: a reply to a message without a uid); replies
        to other clients' requests, published to every subscriber, are skipped."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self.sub.poll(int(left * 1000)):
                raise TimeoutError(f"no reply to {uid} within {self.timeout_s:.0f} s")
            reply = proto.decode_reply(self.sub.recv())
            if reply.get("uid") == uid:
                return reply["response"]

    def request(self, kind: str, **content) -> dict:
        """Send one request; the reply's response {code, info, content}, whatever its code."""
        uid = str(uuid.uuid4())
        self.send_raw(proto.encode_request(uid, kind, {**content, "sid": self.sid}))
        response = self.receive(uid)
        if kind == "GET_OBSERVATION" and response["code"] == proto.OK:
            self.last_obs_uid = uid
        return response

    def call(self, kind: str, **content) -> dict:
        """The reply's content; raises EspireReplyError on any code but 200 (as ESPIRE's client does)."""
        r = self.request(kind, **content)
        if r["code"] != proto.OK:
            raise EspireReplyError(kind, r["code"], r["info"])
        return r["content"]

    def observe(self, view: str = "world", highlight: bool = False) -> dict:
        obs = self.call("GET_OBSERVATION", view=view, highlight_goal=highlight)
        obs["uid"] = self.last_obs_uid
        return obs

    def point(self, kind: str, row: int, col: int, **extra) -> dict:
        return self.call(kind, reference_uid=self.last_obs_uid, point={"row": int(row), "col": int(col)}, **extra)


def goal_box_pixel(plain_rgb: np.ndarray, highlighted_rgb: np.ndarray,
                   depth: np.ndarray | None = None, camera: tuple | None = None) -> tuple[int, int] | None:
    """(row, col) at the centre of the largest box the server drew: the pixels where the
    highlighted image differs from the plain one of the same state. With `depth`, the pixel
    nearest the centre among those inside the box at least as far as the box's median depth:
    a placement area seen past an occluder (the arm holding the book stands in front of the
    shelf) is clicked where the camera sees into it, while the occluder covers less than half the
    box: place seed 0's arm covers 56% of it, and the pixel is on the arm (which the server
    refuses as not the target area); `low_pixel_in_box` clicks where the camera sees into it. With `camera` (K, T_base_camera, as the
    observation gives them), of those the one whose point lies nearest the robot's base across
    (|y|): the box outline is wider than the area it marks (the camera sees its back past its
    front), and the far side of a wide shelf is beyond the arm."""
    box = drawn_box(plain_rgb, highlighted_rgb)
    if box is None:
        return None
    r0, r1, c0, c1 = box
    centre = ((r0 + r1) // 2, (c0 + c1) // 2)
    if depth is None or r1 - r0 < 8 or c1 - c0 < 8:
        return int(centre[0]), int(centre[1])
    inner = depth[r0 + 4:r1 - 3, c0 + 4:c1 - 3]          # inside the outline
    rr, cc = np.nonzero(inner >= np.median(inner[inner > 0]) if (inner > 0).any() else inner >= 0)
    if camera is not None and len(rr):
        K, T = camera
        z = inner[rr, cc]
        y = T[1, :3] @ np.vstack([(cc + c0 + 4 - K[0, 2]) / K[0, 0] * z, (rr + r0 + 4 - K[1, 2]) / K[1, 1] * z, z]) + T[1, 3]
        near = np.abs(y) <= np.abs(y).min() + 0.01          # the side nearest the base, then nearest the centre
        rr, cc = rr[near], cc[near]
    k = int(np.argmin((rr + r0 + 4 - centre[0]) ** 2 + (cc + c0 + 4 - centre[1]) ** 2))
    return int(rr[k] + r0 + 4), int(cc[k] + c0 + 4)


SLOT_DEPTH_M = 0.44        # the shelf's slots are this deep (front face to back panel)
LOW_BAND_M = 0.015         # the lowest points a slot shows: within this of the lowest
BOTTOM_INSET_PX = 10


def low_pixel_in_box(plain_rgb: np.ndarray, highlighted_rgb: np.ndarray, depth: np.ndarray,
                     camera: tuple) -> tuple[int, int] | None:
    """(row, col) of the lowest point the camera sees in the placement area the server marked,
    the one nearest the area's middle across: the server sets the book down on the floor under
    the clicked point, across the slot at it, and a point off the area's middle may be beyond
    the arm. The box is the outline of the area's image, wider
    than the area on the side the camera sees it from: the area's middle across (y) is where
    the rays through the box's left and right edges bound it in both its front and its back
    plane (`_area_middle_y`). Points in front of the slot (the arm and the book it holds) do not
    count. None when nothing is in view."""
    box = drawn_box(plain_rgb, highlighted_rgb)
    if box is None:
        return None
    r0, r1, c0, c1 = box
    # BOTTOM_INSET_PX: the outline's bottom rows can show the underside of the slot's floor board
    # (a slot above the camera), lower than anything in the slot
    rr, cc = np.mgrid[r0 + 4:r1 - BOTTOM_INSET_PX, c0 + 4:c1 - 3]
    rr, cc = rr.ravel(), cc.ravel()
    z = depth[rr, cc].astype(float)
    ok = np.isfinite(z) & (z > 0)
    rr, cc, z = rr[ok], cc[ok], z[ok]
    if len(z) == 0:
        return None
    K, T = camera
    pts = (T[:3, :3] @ np.vstack([(cc - K[0, 2]) / K[0, 0] * z, (rr - K[1, 2]) / K[1, 1] * z, z])).T + T[:3, 3]
    x_back = float(pts[:, 0].max())
    inside = pts[:, 0] >= x_back - SLOT_DEPTH_M - 0.01
    rr, cc, pts = rr[inside], cc[inside], pts[inside]
    low = pts[:, 2] <= pts[:, 2].min() + LOW_BAND_M
    rr, cc, pts = rr[low], cc[low], pts[low]
    y_mid = _area_middle_y(K, T, float(np.median(rr)), c0, c1, x_back)
    k = int(np.argmin(np.abs(pts[:, 1] - y_mid))) if y_mid is not None else int(np.argmin(np.abs(cc - (c0 + c1) / 2)))
    return int(rr[k]), int(cc[k])


def _area_middle_y(K: np.ndarray, T: np.ndarray, row: float, c0: int, c1: int, x_back: float) -> float | None:
    """The middle across (world y) of a slot-deep box whose image spans columns c0..c1 at `row`:
    each edge column's ray meets the box's front and back planes; the box lies inside both
    planes' spans, and touches each edge in one of them, so it spans their overlap."""
    spans = []
    for x in (x_back - SLOT_DEPTH_M, x_back):
        ys = []
        for col in (c0, c1):
            d = T[:3, :3] @ np.array([(col - K[0, 2]) / K[0, 0], (row - K[1, 2]) / K[1, 1], 1.0])
            if abs(d[0]) < 1e-9:
                return None
            ys.append(float(T[1, 3] + (x - T[0, 3]) / d[0] * d[1]))
        spans.append(sorted(ys))
    lo, hi = max(s[0] for s in spans), min(s[1] for s in spans)
    return (lo + hi) / 2 if lo <= hi else None


DEPTH_STEP_M = 0.02        # a jump this large between neighbouring pixels parts two surfaces


def book_pixel_in_box(plain_rgb: np.ndarray, highlighted_rgb: np.ndarray, depth: np.ndarray, camera: tuple,
                      top_share: float = 0.3) -> tuple[int, int] | None:
    """(row, col) on the book the server marked for picking. The box is drawn tight around the
    book's visible silhouette, so the book is the surface inside it (pixels parted by no depth
    jump) that reaches the most of the box's four sides, the largest of those; a book in front
    of it or the table behind reach fewer. Of that surface, the pixel nearest the box's centre
    among its highest `top_share` (the book stands above the wedge or holder it may touch).
    The server grasps only at a point on the book, and the box's centre alone can fall on an
    occluder or a support."""
    box = drawn_box(plain_rgb, highlighted_rgb)
    if box is None:
        return None
    r0, r1, c0, c1 = box
    d = depth[r0:r1 + 1, c0:c1 + 1].astype(float)
    valid = np.isfinite(d) & (d > 0)
    jump = np.zeros_like(valid)
    jump[1:, :] |= np.abs(np.diff(d, axis=0)) > DEPTH_STEP_M
    jump[:-1, :] |= np.abs(np.diff(d, axis=0)) > DEPTH_STEP_M
    jump[:, 1:] |= np.abs(np.diff(d, axis=1)) > DEPTH_STEP_M
    jump[:, :-1] |= np.abs(np.diff(d, axis=1)) > DEPTH_STEP_M
    labels, n = ndimage.label(valid & ~jump)
    if n == 0:
        return (r0 + r1) // 2, (c0 + c1) // 2
    edge = 2
    sides = [labels[:edge], labels[-edge:], labels[:, :edge], labels[:, -edge:]]
    reach = [sum(k in set(np.unique(side)) for side in sides) for k in range(1, n + 1)]
    sizes = ndimage.sum(np.ones_like(d), labels, range(1, n + 1))
    best = max(range(n), key=lambda i: (reach[i], sizes[i])) + 1
    rr, cc = np.nonzero(labels == best)
    z = d[rr, cc]
    rr, cc = rr + r0, cc + c0
    K, T = camera
    height = T[2, :3] @ np.vstack([(cc - K[0, 2]) / K[0, 0] * z, (rr - K[1, 2]) / K[1, 1] * z, z]) + T[2, 3]
    top = height >= np.quantile(height, 1.0 - top_share)
    rr, cc = rr[top], cc[top]
    k = int(np.argmin((rr - (r0 + r1) / 2) ** 2 + (cc - (c0 + c1) / 2) ** 2))
    return int(rr[k]), int(cc[k])


def drawn_box(plain_rgb: np.ndarray, highlighted_rgb: np.ndarray) -> tuple[int, int, int, int] | None:
    """(r0, r1, c0, c1) of the largest box outline the server drew (where the images differ)."""
    diff = np.any(plain_rgb != highlighted_rgb, axis=2)
    labels, n = ndimage.label(diff)
    if n == 0:
        return None
    sizes = ndimage.sum(diff, labels, range(1, n + 1))
    rows, cols = np.nonzero(labels == int(np.argmax(sizes)) + 1)
    return int(rows.min()), int(rows.max()), int(cols.min()), int(cols.max())


@dataclass
class EpisodeLog:
    task_id: str
    action: str
    localized: bool = False
    localize_tries: int = 0
    moved: bool = False
    move_tries: int = 0
    finish_goal: bool = False
    statuses: list = field(default_factory=list)
    round_trips: dict = field(default_factory=dict)    # request type -> [seconds]
    update_s: list = field(default_factory=list)       # server-reported environment updates
    wall_s: float = 0.0

    @property
    def localized_and_finished(self) -> bool:
        """ESPIRE's analyze, "Localizing and moving and finish_goal success": the episode counts
        only when a LOCALIZE hit an answer too."""
        return self.localized and self.moved and self.finish_goal


class ProtocolDriver:
    """ESPIRE's episode flow (BaseDriver, without reflection): SET_TASK; localize on the plain
    world view up to `localizing_trials` times, else SKIP_LOCALIZATION; MOVE on the highlighted
    world view, then after each miss on a fresh highlighted ego view, up to `moving_trials`;
    observe, END_TASK, observe. Subclasses choose the pixels."""

    name = "driver"

    def __init__(self, client: EspireProtocolClient, localizing_trials: int = 3, moving_trials: int = 5):
        self.c, self.loc_trials, self.move_trials = client, localizing_trials, moving_trials

    def localize_pixel(self, obs: dict, task: dict) -> tuple[int, int] | None:
        raise NotImplementedError

    def move_pixel(self, view: str, obs: dict, task: dict, log: EpisodeLog) -> tuple[int, int] | None:
        raise NotImplementedError

    def set_down_pose(self, task: dict) -> str | None:
        """The pose a place MOVE sets the book down in (a key of protocol.SET_DOWN_DELTAS), or None:
        no `rotation_delta`, as ESPIRE's stock driver sends none (the book goes down as held)."""
        return None

    def move_extra(self, task: dict) -> dict:
        """A place MOVE's `rotation_delta`: the pose the driver chose (the server executes it)."""
        pose = self.set_down_pose(task) if task["action"] == "place" else None
        return {} if pose is None else {"rotation_delta": list(proto.SET_DOWN_DELTAS[pose])}

    def _timed(self, log: EpisodeLog, kind: str, fn):
        t0 = time.perf_counter()
        out = fn()
        log.round_trips.setdefault(kind, []).append(time.perf_counter() - t0)
        if isinstance(out, dict) and "update_s" in out:
            log.update_s.append(out["update_s"])
        return out

    def observe(self, log: EpisodeLog, view: str, highlight: bool) -> dict:
        return self._timed(log, "GET_OBSERVATION", lambda: self.c.observe(view, highlight))

    def run(self, task: dict) -> EpisodeLog:
        t0 = time.perf_counter()
        log = EpisodeLog(task["id"], task["action"])
        self._timed(log, "SET_TASK", lambda: self.c.call("SET_TASK", task_id=task["id"], rotation=[None, None, None]))
        plain = self.observe(log, "world", False)
        for _ in range(self.loc_trials):
            px = self.localize_pixel(plain, task)
            if px is None:
                break
            log.localize_tries += 1
            r = self._timed(log, "LOCALIZE", lambda px=px: self.c.call(
                "LOCALIZE", reference_uid=plain["uid"], point={"row": px[0], "col": px[1]}))
            if r["goal_met"]:
                log.localized = True
                break
        if not log.localized:
            self._timed(log, "SKIP_LOCALIZATION", lambda: self.c.call("SKIP_LOCALIZATION", goal=None))
        view = "world"
        obs = self.observe(log, view, True)
        for _ in range(self.move_trials):
            px = self.move_pixel(view, obs, task, log)
            if px is None:
                break
            log.move_tries += 1
            r = self._timed(log, "MOVE", lambda px=px: self.c.point("MOVE", *px, **self.move_extra(task)))
            log.statuses.append(r["status"])
            if r["goal_met"]:
                log.moved = True
                break
            view = "ego"        # ESPIRE re-plans from the wrist view after a miss
            obs = self.observe(log, view, True)
        self.observe(log, "world", True)
        end = self._timed(log, "END_TASK", lambda: self.c.call("END_TASK"))
        log.finish_goal = bool(end["post_state"]["execution"]["finish_goal"])
        self.observe(log, "world", True)
        log.wall_s = time.perf_counter() - t0
        return log


class OracleDriver(ProtocolDriver):
    """Clicks the goal the server marks: the centre of the box drawn on the highlighted view
    (found by comparing it with a plain view of the same state), where the camera sees into it.
    It needs no model, so its rate is the ceiling the server and its arm allow."""

    name = "oracle"

    def _goal_pixel(self, view: str, log: EpisodeLog, task: dict):
        plain = self.observe(log, view, False)
        high = self.observe(log, view, True)      # the last observation: a MOVE refers to it
        depth = proto.decode_f32(plain["depth"], plain["shape"]["row"], plain["shape"]["col"])
        camera = (proto.decode_f32(plain["intrinsic"], 3, 3), proto.decode_f32(plain["extrinsic"], 4, 4))
        rgb = proto.decode_png(plain["rgb"]), proto.decode_png(high["rgb"])
        if task.get("family_key", "").startswith("place:"):    # shelf slots, not the table
            return low_pixel_in_box(*rgb, depth, camera)
        return book_pixel_in_box(*rgb, depth, camera)

    def localize_pixel(self, obs: dict, task: dict):
        high = self.c.observe("world", True)
        rgb = proto.decode_png(obs["rgb"]), proto.decode_png(high["rgb"])
        if task.get("family_key", "").startswith("place:"):
            return goal_box_pixel(*rgb)
        depth = proto.decode_f32(obs["depth"], obs["shape"]["row"], obs["shape"]["col"])
        return book_pixel_in_box(*rgb, depth, (proto.decode_f32(obs["intrinsic"], 3, 3), proto.decode_f32(obs["extrinsic"], 4, 4)))

    def move_pixel(self, view: str, obs: dict, task: dict, log: EpisodeLog):
        px = self._goal_pixel(view, log, task)
        if px is None and view != "world":        # the goal out of the wrist camera's sight
            px = self._goal_pixel("world", log, task)
        return px

    def set_down_pose(self, task: dict) -> str:
        """The pose the task asks for: flat for the lay-it-flat family, else upright (read from
        the task's family, as an oracle may)."""
        return "flat" if task.get("family_key") == FLAT_FAMILY_KEY else "upright"


class RandomClickDriver(ProtocolDriver):
    """Clicks uniformly random pixels of the image it is shown (seeded): the floor a driver
    that understands nothing reaches through ESPIRE's stock client, which sends no
    `rotation_delta` (so the book goes down upright, as held; a random pose would halve the
    floor on the upright tasks, below what a random clicker gets through ESPIRE's client)."""

    name = "random"

    def __init__(self, client: EspireProtocolClient, rng: np.random.Generator, **kw):
        super().__init__(client, **kw)
        self.rng = rng

    def _pixel(self, obs: dict) -> tuple[int, int]:
        return int(self.rng.integers(obs["shape"]["row"])), int(self.rng.integers(obs["shape"]["col"]))

    def localize_pixel(self, obs: dict, task: dict):
        return self._pixel(obs)

    def move_pixel(self, view: str, obs: dict, task: dict, log: EpisodeLog):
        return self._pixel(obs)


DRIVERS = {"oracle": OracleDriver, "random": RandomClickDriver}


def make_driver(name: str, client: EspireProtocolClient, seed: int = 0) -> ProtocolDriver:
    if name not in DRIVERS:
        raise ValueError(f"unknown driver {name!r}; expected one of {sorted(DRIVERS)}")
    if name == "random":
        return RandomClickDriver(client, np.random.default_rng(seed))
    return DRIVERS[name](client)
