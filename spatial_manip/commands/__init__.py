"""The command front-ends of `spatial-manip` (issue 41): each module turns a person's arguments
into calls on the core packages and prints the answer. They sit above the product, beside bench/
(benchmarks and evaluations) and devtools/ (tools for developers); no core package imports them.
spatial_manip/cli.py's table names each command's module.
"""
