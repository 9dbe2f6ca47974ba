"""The task kinds a goal may name, once: the index is ExecuteInstruction's KIND_* constant."""
TASK_KINDS = ("auto", "pick", "place", "pick_and_place")
# What one planner call plans: a pick and place in one instruction is split into its two steps
# before planning (reasoning/compound.py), so a planner is never asked for "pick_and_place".
PLANNER_TASK_KINDS = TASK_KINDS[:3]
