"""The ESPIRE-protocol server: a PULL socket for requests, an XPUB socket for replies.

One session (the client's `sid`) runs a task at a time, and the task is that session's until it
sends END_TASK or stays silent for `session_timeout_s`; a second session is told so (503).
Sockets opening or closing on the reply port change nothing (any subscriber may come and go).
ESPIRE's `start()` opens a new client, hence a new sid, per episode; a finished episode
(END_TASK) never blocks the next one.

XPUB instead of PUB (wire-compatible with the client's SUB): its subscription messages tell
when a SUB has joined, so the first reply to a new session is not published before that
session's SUB listens (ZeroMQ's slow-joiner drop: the stock client waits for a reply with no
timeout), nor a known session's reply after a subscriber left (its sockets may be new ones).
Such a reply waits, without blocking the server, for a subscription that joined
shortly before the request or after it (an idle subscriber that joined long ago is not the new
session's), at most JOIN_WAIT_S. A first reply that went out on a guess (on a join that may have
been another client's, or when the wait ran out) is sent again on the next RESENDS_MAX joins
within RESEND_S until its session speaks again, so a SUB that connects late on a loaded machine
still hears it. Clients skip replies whose uid they did not ask for (ESPIRE's gives up after 10 in
a row, hence the copies stop as soon as the session is known to have heard, and are few).
Malformed input is answered at once.
"""
from __future__ import annotations

import time
import traceback
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import zmq

from spatial_manip.espire import protocol as proto
from spatial_manip.espire import views
from spatial_manip.espire.episode import Episode
from spatial_manip.sim.sensing import IDEAL, SensingProfile

JOIN_WAIT_S = 0.5        # longest a new session's first reply waits for its SUB to join
RECENT_JOIN_S = 2.0      # a subscription at most this old when a new session speaks may be its own
RESEND_S = 10.0          # how long a first reply sent on a guess is re-sent on each new join
RESENDS_MAX = 3          # and at most this often: ESPIRE's client gives up after 10 foreign replies in a row


@dataclass
class Session:
    sid: str
    last_seen: float
    episode: Episode | None = None

    def in_progress(self) -> bool:
        return self.episode is not None and self.episode.ended is None


@dataclass
class Stats:
    started: float = field(default_factory=time.perf_counter)
    requests: int = 0
    errors: int = 0
    by_type: dict = field(default_factory=dict)     # type -> [seconds]
    updates: list = field(default_factory=list)     # observation renders + MOVE executions, seconds
    episodes: list = field(default_factory=list)    # (task id, finish_goal, seconds from SET_TASK)

    def add(self, kind: str, dt: float) -> None:
        self.by_type.setdefault(kind, []).append(dt)

    def summary(self) -> str:
        lines = [f"espire-server: {self.requests} requests ({self.errors} errors), {len(self.episodes)} episodes ended"]
        for kind, ts in sorted(self.by_type.items()):
            lines.append(f"  {kind:<18} n={len(ts):<4} median {1000 * np.median(ts):7.1f} ms  p95 {1000 * np.percentile(ts, 95):7.1f} ms")
        if self.updates:
            med = float(np.median(self.updates))
            lines.append(f"  environment update (observation render or MOVE): median {1000 * med:.1f} ms, "
                         f"p95 {1000 * np.percentile(self.updates, 95):.1f} ms, n={len(self.updates)}; "
                         f"ESPIRE (Isaac Sim, Table 9): 11.65 s per update")
        if self.episodes:
            wall = sum(e[2] for e in self.episodes)
            ok = sum(1 for e in self.episodes if e[1])
            lines.append(f"  episodes: {ok}/{len(self.episodes)} finished the goal; "
                         f"{3600 * len(self.episodes) / max(wall, 1e-9):.0f} episodes/hour of server-side episode time")
        return "\n".join(lines)


class EspireServer:
    def __init__(self, tasks: list, *, host: str = "127.0.0.1", server_port: int = 6001, client_port: int = 6000,
                 session_timeout_s: float = 600.0, log=print, verbose: bool = True, sensing: SensingProfile = IDEAL):
        if not tasks:
            raise ValueError("the server needs at least one task")
        self.tasks = {t.id: (t, s) for t, s in tasks}
        self.session_timeout_s = float(session_timeout_s)
        self.sensing = sensing            # of every episode's world (sim/sensing.py)
        self.log, self.verbose = log, verbose
        self.session: Session | None = None
        self.spoke_at: dict[str, float] = {}     # sid -> when it last sent a request
        self.last_leave = float("-inf")          # when a subscriber last left the reply port
        self.joins: deque = deque()      # times of subscriptions no session has been matched with
        self.held_replies: list = []     # (deadline, sid, reply bytes): new sessions' first replies, unsent
        # sid -> (deadline, reply bytes, re-sends left): the same, sent, re-sent on each new join
        # until that session speaks again (it heard it), RESEND_S passed or RESENDS_MAX were sent
        self.sent_first: dict[str, tuple[float, bytes, int]] = {}
        self.stats = Stats()
        self._episode_t0 = 0.0
        self.ctx = zmq.Context()
        self.pull = self.ctx.socket(zmq.PULL)
        # a peer sending more than this is cut off; up to it, an oversized request gets a 413
        self.pull.setsockopt(zmq.MAXMSGSIZE, proto.HARD_MAX_MESSAGE_BYTES)
        self.pull.setsockopt(zmq.LINGER, 0)
        self.pub = self.ctx.socket(zmq.XPUB)
        self.pub.setsockopt(zmq.XPUB_VERBOSER, 1)      # every (un)subscription, not only the first/last
        self.pub.setsockopt(zmq.LINGER, 0)
        self.pull.bind(f"tcp://{host}:{server_port}")
        self.pub.bind(f"tcp://{host}:{client_port}")
        self.endpoints = (f"tcp://{host}:{server_port}", f"tcp://{host}:{client_port}")

    # --- loop ---------------------------------------------------------------------------------
    def serve(self, max_episodes: int | None = None, should_stop=None) -> None:
        poller = zmq.Poller()
        poller.register(self.pull, zmq.POLLIN)
        poller.register(self.pub, zmq.POLLIN)
        while not (should_stop and should_stop()):
            if max_episodes is not None and len(self.stats.episodes) >= max_episodes:
                self._drain_final_requests(poller)
                return
            self._poll_once(poller, 200)

    def _poll_once(self, poller, timeout_ms: int) -> bool:
        """Serve what arrived within `timeout_ms`; whether a request was served."""
        if self.held_replies:
            left = min(d for d, _, _ in self.held_replies) - time.monotonic()
            timeout_ms = max(0, min(timeout_ms, int(1000 * left) + 1))
        events = dict(poller.poll(timeout_ms))
        if self.pub in events:
            self._read_subscriptions()
        if self.pull in events:
            self._serve_one(self.pull.recv())
        self._release_held(time.monotonic())
        return self.pull in events

    def _drain_final_requests(self, poller, quiet_s: float = 1.0) -> None:
        """After the last episode, answer what the client still sends (ESPIRE's driver observes
        once more after END_TASK) until it has been quiet for `quiet_s`."""
        deadline = time.monotonic() + quiet_s
        while time.monotonic() < deadline or self.held_replies:
            if self._poll_once(poller, 50):
                deadline = time.monotonic() + quiet_s

    def _read_subscriptions(self) -> None:
        while self.pub.poll(0):
            msg = self.pub.recv()
            now = time.monotonic()
            if msg[:1] == b"\x00":
                self.last_leave = now
                continue
            if msg[:1] != b"\x01":
                continue
            self.joins.append(now)
            # a first reply sent on a guess may have missed its own SUB: send it again (a client
            # that got it skips the copy by its uid)
            self.sent_first = {sid: (d, r, n - 1) for sid, (d, r, n) in self.sent_first.items() if d > now and n > 0}
            for _, reply, _ in self.sent_first.values():
                self.pub.send(reply)
            if self.held_replies:          # a SUB joined: whoever waited for it can hear now
                self.joins.popleft()
                self._release_held(float("inf"))

    def _release_held(self, now: float) -> None:
        due = [(sid, r) for d, sid, r in self.held_replies if d <= now]
        self.held_replies = [h for h in self.held_replies if h[0] > now]
        for sid, reply in due:
            self._send_first(sid, reply)

    def _send_first(self, sid: str, reply: bytes) -> None:
        """Send a new session's first reply, and keep it to send again on the joins that follow
        (the join it went out on may not have been its session's SUB)."""
        self.sent_first[sid] = (time.monotonic() + RESEND_S, reply, RESENDS_MAX)
        self.pub.send(reply)

    def _publish(self, reply: bytes, sid: str, new_session: bool) -> None:
        """Send now, or (a new session whose SUB may not have joined) once it joins."""
        if new_session:
            now = time.monotonic()
            while self.joins and now - self.joins[0] > RECENT_JOIN_S:
                self.joins.popleft()
            if not self.joins:
                self.held_replies.append((now + JOIN_WAIT_S, sid, reply))
                return
            self.joins.popleft()
            self._send_first(sid, reply)
            return
        self.pub.send(reply)

    def _serve_one(self, raw: bytes) -> None:
        t0 = time.perf_counter()
        uid, kind, sid, new_session = None, "?", "?", False
        try:
            req = proto.decode_request(raw)
            uid, kind, sid = req.uid, req.type, req.sid
            self.sent_first.pop(sid, None)      # it speaks again: it heard its first reply
            # a session that speaks again after a subscriber left may have new sockets (its SUB
            # closed and reopened): its reply waits for a join as a new session's does
            before = self.spoke_at.get(sid)
            new_session = before is None or before < self.last_leave
            self.spoke_at[sid] = time.monotonic()
            content = self.handle(req)
            code, info = proto.OK, "ok"
        except proto.ProtocolError as e:
            uid = e.uid if e.uid is not None else uid
            code, info, content = e.code, e.info, {}
        except Exception as e:    # the simulator raised: answer, log, keep serving
            code, info, content = proto.INTERNAL, f"internal error in {kind}: {type(e).__name__}: {e}", {}
            self.log(traceback.format_exc())
        dt = time.perf_counter() - t0
        self._publish(proto.encode_reply(uid, code, info, content), sid, new_session)
        self.stats.requests += 1
        self.stats.errors += code != proto.OK
        self.stats.add(kind, dt)
        if self.verbose or code != proto.OK:
            self.log(self._progress_line(sid, kind, code, info, content, dt))

    def _progress_line(self, sid, kind, code, info, content, dt) -> str:
        ep = self.session.episode if self.session is not None else None
        task = ep.task.id if ep is not None else "-"
        what = info if code != proto.OK else ""
        if kind in ("LOCALIZE", "MOVE") and code == proto.OK:
            what = f"goal_met={content.get('goal_met')}" + (f" status={content['status']}" if "status" in content else "")
        elif kind == "END_TASK" and code == proto.OK:
            what = f"finish_goal={content['post_state']['execution']['finish_goal']}"
        return f"[espire {time.strftime('%H:%M:%S')}] {str(sid)[:8]} {kind:<17} {task:<16} -> {code} {what} ({1000 * dt:.0f} ms)"

    def close(self) -> None:
        if self.session is not None and self.session.episode is not None:
            self.session.episode.close()
        self.pull.close(0)
        self.pub.close(0)
        self.ctx.term()

    # --- requests -----------------------------------------------------------------------------
    def handle(self, req: proto.Request) -> dict:
        if req.type == "GET_TASK_LIST":     # read-only: any client may list the tasks
            return {"tasks": [self._task_entry(t) for t, _ in self.tasks.values()]}
        session = self._claim(req)
        try:
            return self._answer(session, req)
        finally:    # silence counts from the reply: a client cannot speak while its request runs
            session.last_seen = time.monotonic()

    def _answer(self, session: Session, req: proto.Request) -> dict:
        if req.type == "SET_TASK":
            return self._set_task(session, req)
        ep = session.episode
        if ep is None:
            raise proto.ProtocolError(proto.CONFLICT, f"{req.type} needs a task: send SET_TASK first", req.uid)
        if req.type == "GET_OBSERVATION":
            return self._observe(ep, req)
        if req.type == "END_TASK":
            return self._end(ep, req)
        if ep.ended is not None:
            raise proto.ProtocolError(proto.CONFLICT, f"task {ep.task.id} has ended; {req.type} needs SET_TASK again", req.uid)
        if req.type == "SKIP_LOCALIZATION":
            return ep.skip_localization()
        kept = ep.reference(req.content.get("reference_uid"), req.uid)
        h, w = kept.obs.depth_m.shape
        row, col = proto.pixel(req.content, req.uid, h, w)
        if req.type == "LOCALIZE":
            return ep.localize(kept, row, col, req.uid)
        delta = proto.rotation_delta(req.content, req.uid)
        content = ep.move(kept, row, col, delta, req.uid)
        content["update_s"] = round(ep.update_s[-1], 4)
        self.stats.updates.append(ep.update_s[-1])
        return content

    def _claim(self, req: proto.Request) -> Session:
        """The session of the request; another session's running task is its own until it ends
        it or stays silent for session_timeout_s."""
        now = time.monotonic()
        s = self.session
        if s is not None and s.sid != req.sid:
            silent = now - s.last_seen > self.session_timeout_s
            if s.in_progress() and not silent:
                raise proto.ProtocolError(proto.BUSY, f"busy: session {s.sid[:8]} is running task {s.episode.task.id}; "
                                          "this server serves one session at a time: retry after it sends END_TASK "
                                          f"or has been silent for {self.session_timeout_s:.0f} s", req.uid)
            if s.in_progress():
                self.log(f"[espire] session {s.sid[:8]} abandoned task {s.episode.task.id} (silent for "
                         f"{now - s.last_seen:.0f} s); serving {req.sid[:8]}")
            if s.episode is not None:
                s.episode.close()
            s = None
        if s is None:
            s = self.session = Session(req.sid, now)
        s.last_seen = now
        return s

    def _task_entry(self, t) -> dict:
        return {"id": t.id, "action": t.action, "instruction": t.instruction, "family": t.family,
                "family_key": t.family_key, "aspect": t.aspect, "granularity": t.granularity,
                "difficulty": t.difficulty, "suite": t.suite, "frame": t.frame, "scene_kind": t.scene_kind}

    def _set_task(self, session: Session, req: proto.Request) -> dict:
        task_id = proto.field(req.content, "task_id", str, "a task id from GET_TASK_LIST", req.uid)
        if task_id not in self.tasks:
            raise proto.ProtocolError(proto.NOT_FOUND, f"unknown task {task_id!r}; GET_TASK_LIST lists the "
                                      f"{len(self.tasks)} tasks of this server", req.uid)
        rotation = proto.rotation_require(req.content, req.uid)
        if session.episode is not None:
            if session.in_progress():
                self.log(f"[espire] {session.sid[:8]} left task {session.episode.task.id} unfinished for {task_id}")
            session.episode.close()
            session.episode = None
        task, scene = self.tasks[task_id]
        session.episode = Episode(task, scene, rotation, self.sensing)
        self._episode_t0 = time.perf_counter()
        return {"task": self._task_entry(task), "rotation": rotation,
                "start_state": {"env_state": session.episode.env_state()}}

    def _observe(self, ep: Episode, req: proto.Request) -> dict:
        view = proto.field(req.content, "view", str, f"one of {list(views.VIEWS)}", req.uid)
        if view not in views.VIEWS:
            raise proto.ProtocolError(proto.BAD_REQUEST, f"unknown view {view!r}; expected one of {list(views.VIEWS)}", req.uid)
        highlight = proto.field(req.content, "highlight_goal", bool, "true or false", req.uid)
        content = ep.observe(req.uid, view, highlight)
        content["update_s"] = round(ep.update_s[-1], 4)
        self.stats.updates.append(ep.update_s[-1])
        return content

    def _end(self, ep: Episode, req: proto.Request) -> dict:
        """ESPIRE's verdict; a repeated END_TASK (the stock client sends two when it skips
        moving) gets the same reply and counts once."""
        first = ep.ended is None
        content = ep.end()
        if first:
            self.stats.episodes.append((ep.task.id, content["post_state"]["execution"]["finish_goal"],
                                        time.perf_counter() - self._episode_t0))
        return content
