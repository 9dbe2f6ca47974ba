"""`spatial-manip goal TEXT`: send one instruction to a running graph, print feedback as it
arrives and the result. Exit status 0 on success, 1 on a failed goal (or no result in time), 2 when
no server answers (or it stops answering while the goal runs)."""
from __future__ import annotations

import argparse
import json
import signal
import sys

from spatial_manip.bringup.goal_client import ACTION_NAME, KINDS, send_goal, spinning_node
from spatial_manip.bringup.graph import GraphError
from spatial_manip.bringup.launch_args import ros_namespace


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("instruction", help='e.g. "pick the second leftmost book lying flat"')
    p.add_argument("--kind", choices=sorted(KINDS), default="auto", help="task kind (default: inferred)")
    p.add_argument("--dry-run", action="store_true", help="plan only; never move the arm")
    p.add_argument("--attempts", type=int, default=0,
                   help="attempts including reflection retries (default 0: the planner's configured default)")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for the result")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--server-timeout", type=float, default=20.0, help="seconds to wait for the action server")
    p.add_argument("--namespace", type=_namespace, default="",
                   help="the cell's namespace, as launched with namespace:=NS (default: the root namespace)")


def _namespace(value: str) -> str:
    try:
        return ros_namespace(value, given_as="--namespace ")
    except GraphError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def result_dict(report) -> dict:
    r = report.result
    if r is None:
        return {"status": report.status, "success": False}
    pos = r.target_pose.pose.position
    return {"status": report.status, "success": r.success, "error_code": r.error_code, "message": r.message,
            "target_ids": list(r.target_ids), "target_position": [pos.x, pos.y, pos.z],
            "trace_path": r.trace_path, "attempts": r.attempts, "elapsed_s": round(report.elapsed_s, 3)}


def run(args) -> int:
    # Ctrl-C cancels the goal even when this was started from a process that ignores SIGINT
    # (a child inherits an ignored SIGINT, and Python then installs no KeyboardInterrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    def show(fb):
        if not args.json:
            print(f"  [{fb.progress * 100:5.1f}%] attempt {fb.attempt} {fb.stage:<10} {fb.detail}", flush=True)

    try:
        with spinning_node("spatial_manip_goal_client", threads=1) as node:
            report = send_goal(node, args.instruction, kind=args.kind, dry_run=args.dry_run,
                               max_attempts=args.attempts, timeout_s=args.timeout, on_feedback=show,
                               server_timeout_s=args.server_timeout, action_name=args.namespace + ACTION_NAME)
    except TimeoutError as e:
        print(f"spatial-manip goal: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:     # before the goal was accepted: nothing is moving
        print("spatial-manip goal: interrupted before the goal was accepted", file=sys.stderr)
        return 130
    d = result_dict(report)
    if report.result is None and report.error and not report.interrupted:   # server lost, or no result in time
        print(f"spatial-manip goal: {report.status}: {report.error}", file=sys.stderr)
        return 2 if report.status == "server_lost" else 1
    if report.interrupted:
        print(f"interrupted: the goal ended {d.get('status')} ({d.get('error_code', 'no answer')})", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(d))
    else:
        print(f"result: {d.get('status')} success={d.get('success')} code={d.get('error_code', '')!r}")
        print(f"  {d.get('message', '')}")
        if d.get("target_ids"):
            print(f"  targets: {', '.join(d['target_ids'])} at {d['target_position']}")
        if d.get("trace_path"):
            print(f"  trace: {d['trace_path']}")
    return 0 if d.get("success") else 1
