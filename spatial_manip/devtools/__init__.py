"""Development tools that stand in for hardware or measure it: the UR controller and Robotiq
socket emulators (`spatial-manip ur-emulator`) and the arm benchmark (`spatial-manip arm-bench`).

They sit above the core (they import control/ and sim/); nothing in the core imports them.
"""
