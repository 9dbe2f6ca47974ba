"""Error codes shared by every layer, and the exception that carries one.

The codes are the ones of `ExecuteInstruction.action` (and the arm and grasp interfaces), so an
error raised deep in the core reaches the user unchanged in the action result.
"""
from __future__ import annotations

import enum


class ErrorCode(str, enum.Enum):
    INVALID_GOAL = "INVALID_GOAL"          # the request itself is malformed
    BUSY = "BUSY"                          # another goal is running
    NO_OBSERVATION = "NO_OBSERVATION"      # no fresh, valid RGB-D observation
    TARGET_NOT_FOUND = "TARGET_NOT_FOUND"  # the named object or region is not in the scene
    AMBIGUOUS = "AMBIGUOUS"                # several targets fit, or the words contradict
    NOT_UNDERSTOOD = "NOT_UNDERSTOOD"      # the instruction could not be parsed
    UNREACHABLE = "UNREACHABLE"            # outside the safe workspace or no IK solution
    GRASP_FAILED = "GRASP_FAILED"          # no valid grasp, or the object slipped
    MOTION_FAILED = "MOTION_FAILED"        # the arm refused or stopped
    VERIFY_FAILED = "VERIFY_FAILED"        # final state does not satisfy the instruction
    CANCELED = "CANCELED"                  # the client canceled
    TIMEOUT = "TIMEOUT"                    # a stage exceeded its time limit
    INTERNAL = "INTERNAL"                  # a bug: see the message and the trace


class SpatialManipError(Exception):
    """An error with a code from `ErrorCode` and a message a user can act on."""

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, code: ErrorCode | str | None = None):
        super().__init__(message)
        if code is not None:
            self.code = ErrorCode(code)
        self.message = message

    def to_dict(self) -> dict:
        return {"code": self.code.value, "message": self.message}


class InvalidGoalError(SpatialManipError):
    code = ErrorCode.INVALID_GOAL


class NoObservationError(SpatialManipError):
    code = ErrorCode.NO_OBSERVATION


class TargetNotFoundError(SpatialManipError):
    code = ErrorCode.TARGET_NOT_FOUND


class AmbiguousError(SpatialManipError):
    code = ErrorCode.AMBIGUOUS


class NotUnderstoodError(SpatialManipError):
    code = ErrorCode.NOT_UNDERSTOOD


class UnreachableError(SpatialManipError):
    code = ErrorCode.UNREACHABLE


class GraspFailedError(SpatialManipError):
    code = ErrorCode.GRASP_FAILED


class MotionFailedError(SpatialManipError):
    code = ErrorCode.MOTION_FAILED


class ArmLostError(MotionFailedError):
    """The arm's server stopped answering (killed, frozen, its link gone): another attempt would
    only wait for it again, so the goal ends at once (a frozen sim_node mid-move was retried into
    NO_OBSERVATION after 29 s)."""

    retryable = False


class CanceledError(SpatialManipError):
    code = ErrorCode.CANCELED


class StageTimeoutError(SpatialManipError):
    code = ErrorCode.TIMEOUT


class ConfigError(InvalidGoalError):
    """A configuration file or parameter is wrong; the message names the file, the key, the value
    and what is accepted. A node refuses to start on one (nodes/runner.spin_node). It is an
    InvalidGoalError so the callers that refuse a bad setting in a goal refuse it the same way."""


class BackendUnavailableError(SpatialManipError):
    """An optional backend's SDK, licence or weights are missing; the message says how to get them."""

    code = ErrorCode.INVALID_GOAL
