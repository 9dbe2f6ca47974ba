"""The emulated controller's script state machine (devtools/ur_emulator.py), without sockets."""
from spatial_manip.control.kinematics import URKinematics
from spatial_manip.control.config import load_arm_config
from spatial_manip.devtools.emulated_arm import EmulatedArm
from spatial_manip.devtools.ur_emulator import URControllerEmulator

STOP_SCRIPT, MOVE_J = URControllerEmulator.CMD["stopScript"], URControllerEmulator.CMD["moveJ"]
SCRIPT = b"def rtde_control():\n  # NODE_CONTROL_LOOP_ENDS\nend"


def _emulator() -> URControllerEmulator:
    kin = URKinematics.from_config(load_arm_config()["kinematics"])
    return URControllerEmulator(EmulatedArm(kin, [0.0, -1.57, 1.57, -1.57, -1.57, 0.0]), log=lambda *a: None)


def test_a_new_program_does_not_run_the_stale_stop_script_its_upload_overtook():
    """ur_rtde's moveJ(path): stopScript, clear the register, upload. Under load the upload came
    first; the new program must wait for the clear, then take commands as usual."""
    emu = _emulator()
    emu.inputs["input_int_register_0"] = STOP_SCRIPT
    emu._start_program(SCRIPT)
    emu._step_script()
    assert emu.script_running and emu.out_int[0] != 1          # running, not yet ready
    emu.inputs["input_int_register_0"] = 0                      # the clear arrives
    emu._step_script()
    assert emu.script_running and emu.out_int[0] == 1          # ready for a command
    emu.inputs.update({"input_int_register_0": MOVE_J, "input_int_register_1": 1,
                       **{f"input_double_register_{i}": v for i, v in enumerate([0.1, -1.57, 1.57, -1.57, -1.57, 0.0, 1.0, 2.0])}})
    emu._step_script()
    assert emu.arm.moving and emu.out_int[0] == 2              # the next command runs and is done
    emu.inputs["input_int_register_0"] = 0
    emu._step_script()
    emu.inputs["input_int_register_0"] = STOP_SCRIPT
    emu._step_script()
    assert not emu.script_running                              # a stopScript sent to it stops it
