"""Import edges between spatial_manip's subpackages, at module level and inside functions, and
the cycles among them (root modules such as agent.py count as their own node).

    python scripts/import_graph.py [spatial_manip] [-v]     # -v: every edge with its count
"""
import ast
import collections
import pathlib
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "spatial_manip")
PKG = "spatial_manip"

def sub_of(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts
    return parts[0] if len(parts) > 1 else "(root:" + parts[0] + ")"

def target_sub(mod):
    parts = mod.split(".")
    if parts[0] != PKG or len(parts) < 2:
        return None
    name = parts[1]
    return name if (ROOT / name).is_dir() else "(root:" + name + ")"

edges = collections.defaultdict(lambda: collections.defaultdict(list))  # kind -> (a,b) -> [files]
for f in sorted(ROOT.rglob("*.py")):
    tree = ast.parse(f.read_text())
    src = sub_of(f)
    def visit(node, in_func):
        for ch in ast.iter_child_nodes(node):
            inf = in_func or isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            mods = []
            if isinstance(ch, ast.Import):
                mods = [a.name for a in ch.names]
            elif isinstance(ch, ast.ImportFrom):
                if ch.level:
                    base = list(f.relative_to(ROOT.parent).with_suffix("").parts)[:-ch.level]
                    mods = [".".join(base + ([ch.module] if ch.module else []))]
                    if not ch.module:
                        mods = [".".join(base + [a.name]) for a in ch.names]
                elif ch.module:
                    mods = [ch.module]
                    if ch.module == PKG:
                        mods = [PKG + "." + a.name for a in ch.names]
            for m in mods:
                t = target_sub(m)
                if t and t != src:
                    edges["func" if in_func else "module"][(src, t)].append(f"{f.relative_to(ROOT)}:{ch.lineno}")
            visit(ch, inf)
    visit(tree, False)

def graph(kinds):
    g = collections.defaultdict(set)
    for k in kinds:
        for (a, b) in edges[k]:
            g[a].add(b)
    return g

def sccs(g):
    idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
    nodes = set(g) | {b for v in g.values() for b in v}
    sys.setrecursionlimit(10000)
    def sc(v):
        idx[v] = low[v] = c[0]
        c[0] += 1
        st.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in idx:
                sc(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(nodes):
        if v not in idx:
            sc(v)
    return out

verbose = "-v" in sys.argv
for label, kinds in (("module-level only", ["module"]), ("module-level + in-function", ["module", "func"])):
    g = graph(kinds)
    print(f"== {label}")
    two = sorted({tuple(sorted((a, b))) for a in g for b in g[a] if a in g.get(b, ())})
    print("  2-cycles:", ", ".join(f"{a}<->{b}" for a, b in two) or "none")
    for comp in sccs(g):
        print("  SCC:", " ".join(comp))
    for a, b in two:
        for x, y in ((a, b), (b, a)):
            files = [f + ("" if (x, y) in edges["module"] and f in edges["module"][(x, y)] else " (fn)") for k in kinds for f in edges[k].get((x, y), [])]
            print(f"    {x} -> {y}: {', '.join(files)}")
if verbose:
    for k in ("module", "func"):
        print("==", k)
        for (a, b), fs in sorted(edges[k].items()):
            print(f"  {a} -> {b}: {len(fs)}")
