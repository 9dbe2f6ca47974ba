"""ESPIRE's evaluation protocol over our MuJoCo world.

ESPIRE (spatigen/espire-eval) evaluates a VLM through a client that PUSHes MessagePack requests
to a server and SUBscribes to the replies the server PUBlishes. This package is such a server
over `sim.world.SimWorld`, the task generator and the checker, so ESPIRE's own client and model
drivers run against it unchanged:

    protocol.py  message codec, request validation, error codes, image/matrix encodings
    views.py     the "world" and "ego" cameras, goal masks and the highlighted goal box
    episode.py   one task in one world: observe, localize, move (grasp or place), end
    server.py    sockets, the one-session-at-a-time rule, dispatch, progress and timings
    client.py    a client of the same protocol (tests, the benchmark, our own drivers)
    stack_driver.py  our perception + planner as an ESPIRE driver (pixels from the stack, not the goal box)

Their command lines live above the product: commands/espire_server.py (`spatial-manip espire-server`),
bench/espire_bench.py (`espire-server --bench N`) and bench/espire_eval.py (`spatial-manip espire-eval
--server HOST:PORT`: the stack driver over every served task).
"""
