"""Static HTML for traces: one page per goal (instruction, stages with timings, tool calls with
inputs and outputs, the minimal sufficient set as it evolves, images with overlays), and an
index of a benchmark run's episodes with filters (family, success, failure category).
Static files only: open them in a browser, no server needed."""
from __future__ import annotations

import html
import json
from pathlib import Path
from spatial_manip.sim.metrics import episode_contacts
from spatial_manip.trace import read_when_drawn

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;max-width:1200px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}
.ok{color:#0a7d28;font-weight:600}.fail{color:#b3261e;font-weight:600}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #e3e3e3;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f6f6}pre{background:#f7f7f7;padding:8px;overflow:auto;max-height:320px;margin:0}
.imgs{display:flex;flex-wrap:wrap;gap:12px}.imgs figure{margin:0}.imgs img{max-width:560px;border:1px solid #ccc}
.bar{height:12px;background:#4c78a8;display:inline-block}
.filters{margin:12px 0}.filters select{margin-right:12px}
"""


def _e(x) -> str:
    return html.escape(str(x))


def _pre(obj) -> str:
    return f"<pre>{_e(json.dumps(obj, indent=1) if not isinstance(obj, str) else obj)}</pre>"


def render_trace(trace_json: str | Path, episode: dict | None = None, sensing: str | None = None) -> Path:
    """Write index.html beside a trace.json and return its path. `episode` (a results.json
    record) adds the benchmark's verdict: an episode can fail the success check (e.g.
    not_released) after a goal that the planner reported as done. `sensing` (the profile's
    label; else the episode record's) says what the camera and arm were like."""
    path = Path(trace_json)
    t = read_when_drawn(path)          # right after a result, its last images may still be being written
    out = t.get("outcome") or {}
    ok = bool(out.get("success"))
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>trace: {_e(t['goal'].get('instruction', ''))}</title>",
             f"<style>{CSS}</style></head><body>",
             f"<h1>{_e(t['goal'].get('instruction', ''))}</h1>",
             f"<p class='{'ok' if ok else 'fail'}' id='outcome'>{'SUCCESS' if ok else 'FAILED'} "
             f"{_e(out.get('error_code') or '')}</p><p>{_e(out.get('message', ''))}</p>",
             _episode(episode) if episode is not None else "",
             _sensing(sensing or ((episode or {}).get("backends") or {}).get("sensing")),
             _goal_table(t), _stage_table(t), _images(t), _sets(t), _events(t), "</body></html>"]
    page = path.with_name("index.html")
    page.write_text("\n".join(parts))
    return page


def _episode(r: dict) -> str:
    ok = bool(r.get("success"))
    verdict = "success" if ok else f"failed: <span class='category'>{_e(r.get('failure_category') or 'unknown')}</span>"
    return (f"<p id='episode' class='{'ok' if ok else 'fail'}'>episode {_e(r.get('task_id', ''))} "
            f"({_e(r.get('family', ''))}): {verdict}</p><p>{_e(r.get('check_message', ''))}</p>")


def _sensing(label: str | None) -> str:
    return f"<p id='sensing'>sensing profile: {_e(label or 'not recorded')}</p>"


def _goal_table(t) -> str:
    g, out = t["goal"], t.get("outcome") or {}
    rows = [("task kind", g.get("task_kind")), ("dry run", g.get("dry_run")), ("attempts", out.get("attempts")),
            ("targets", ", ".join(out.get("target_ids") or [])), ("total time", f"{t.get('total_s', 0):.2f} s")]
    return "<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows) + "</table>"


def _stage_table(t) -> str:
    times = t.get("stage_times_s", {})
    if not times:
        return ""
    longest = max(times.values()) or 1.0
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{v:.3f} s</td><td><span class='bar' style='width:{300 * v / longest:.0f}px'>"
                   f"</span></td></tr>" for k, v in times.items())
    return f"<h2>Stages</h2><table id='stages'><tr><th>stage</th><th>time</th><th></th></tr>{rows}</table>"


def _images(t) -> str:
    imgs = t.get("images", [])
    if not imgs:
        return ""
    figs = "".join(f"<figure><img src='{_e(i['file'])}' alt='{_e(i['name'])}'><figcaption>{_e(i['caption'])}"
                   f"</figcaption></figure>" for i in imgs)
    return f"<h2>Images</h2><div class='imgs'>{figs}</div>"


def _sets(t) -> str:
    rows = [e for e in t["events"] if e["kind"] in ("facts", "minimal_set", "program_step")]
    if not rows:
        return ""
    body = "".join(f"<tr><td>{e['t_s']:.3f}</td><td>{_e(e['kind'])}</td><td>"
                   f"{_program_step(e) if e['kind'] == 'program_step' else _pre({k: v for k, v in e.items() if k not in ('t_s', 'kind')})}"
                   f"</td></tr>" for e in rows)
    return f"<h2>Facts and the minimal sufficient set</h2><table><tr><th>t (s)</th><th>step</th><th>content</th></tr>{body}</table>"


def _node_steps(steps) -> list[dict]:
    """The program's evaluated nodes ({node, ids}) wherever they sit in a planner's step list."""
    found = []
    for s in steps if isinstance(steps, list) else []:
        if isinstance(s, dict) and "node" in s:
            found.append(s)
        elif isinstance(s, dict):
            found += _node_steps(s.get("steps"))
    return found


def _program_step(e: dict) -> str:
    """A program's evaluation as a table: each node and the ids it kept, then the targets."""
    nodes = _node_steps(e.get("steps"))
    rows = "".join(f"<tr><td><code>{_e(n['node'])}</code></td><td>{_e(', '.join(map(str, n.get('ids') or [])) or '(none)')}"
                   f"{' at ' + _e(n['position']) if 'position' in n else ''}</td></tr>" for n in nodes)
    err = e.get("error")
    return (f"<div>{_e(e.get('instruction', ''))}</div><div><code>{_e(e.get('program') or '')}</code></div>"
            f"<table class='program'><tr><th>node</th><th>ids</th></tr>{rows}</table>"
            f"<div>targets: {_e(', '.join(map(str, e.get('targets') or [])) or '(none)')}</div>"
            + (f"<div class='fail'>{_e(err.get('message', err) if isinstance(err, dict) else err)}</div>" if err else ""))


def _events(t) -> str:
    body = "".join(f"<tr><td>{e['t_s']:.3f}</td><td>{_e(e['kind'])}</td><td>{_pre({k: v for k, v in e.items() if k not in ('t_s', 'kind')})}</td></tr>"
                   for e in t["events"])
    return f"<h2>Every event and tool call</h2><table id='events'><tr><th>t (s)</th><th>kind</th><th>inputs / outputs</th></tr>{body}</table>"


def render_index(records: list[dict], out_dir: str | Path, title: str = "benchmark run") -> Path:
    """An index page of episodes with filters; each row links to the episode's trace page."""
    out_dir = Path(out_dir)
    fams = sorted({r.get("family", "") for r in records})
    cats = sorted({r.get("failure_category") or "" for r in records} - {""})
    rows = []
    for r in records:
        trace = r.get("trace_path") or ""
        link = ""
        if trace:
            page = Path(trace).with_name("index.html")
            if Path(trace).is_file():  # (re)written with the episode's verdict and failure category
                render_trace(trace, episode=r)
            try:
                link = str(page.relative_to(out_dir))
            except ValueError:
                link = str(page)
        ok = bool(r.get("success"))
        contacts = episode_contacts(r)     # unintended contacts (issue #21); None: not measured
        contacts_cell = "not measured" if contacts is None else str(contacts["total"])
        link_cell = f"<a href='{_e(link)}'>trace</a>" if link else ""
        rows.append(
            f"<tr data-family='{_e(r.get('family', ''))}' data-success='{'yes' if ok else 'no'}' "
            f"data-category='{_e(r.get('failure_category') or '')}'><td>{_e(r.get('task_id', ''))}</td>"
            f"<td>{_e(r.get('family', ''))}</td><td>{_e(r.get('instruction', ''))}</td>"
            f"<td class='{'ok' if ok else 'fail'}'>{'yes' if ok else 'no'}</td>"
            f"<td class='category'>{_e(r.get('failure_category') or '')}</td>"
            f"<td class='contacts'>{contacts_cell}</td><td>{link_cell}</td></tr>")
    opts = lambda xs: "<option value=''>all</option>" + "".join(f"<option>{_e(x)}</option>" for x in xs)  # noqa: E731
    script = """
function applyFilters(){const f=document.getElementById('family').value,s=document.getElementById('success').value,
c=document.getElementById('category').value;let n=0;document.querySelectorAll('#episodes tr[data-family]').forEach(r=>{
const show=(!f||r.dataset.family===f)&&(!s||r.dataset.success===s)&&(!c||r.dataset.category===c);
r.style.display=show?'':'none';if(show)n++;});document.getElementById('count').textContent=n;}
document.querySelectorAll('select').forEach(e=>e.addEventListener('change',applyFilters));applyFilters();"""
    page = out_dir / "index.html"
    page.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><div class='filters'>family <select id='family'>{opts(fams)}</select>"
        f"success <select id='success'><option value=''>all</option><option value='yes'>yes</option><option value='no'>no</option></select>"
        f"failure <select id='category'>{opts(cats)}</select> showing <span id='count'></span> episodes</div>"
        f"<table id='episodes'><tr><th>task</th><th>family</th><th>instruction</th><th>success</th><th>failure</th><th>unintended contacts</th><th></th></tr>"
        f"{''.join(rows)}</table><script>{script}</script></body></html>")
    return page
