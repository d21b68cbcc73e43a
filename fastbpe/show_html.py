"""`fastbpe show --html`: one self-contained page (no network) that shows how text is tokenized.

* the text, each token on its own background colour; hovering shows the id and the bytes;
* counts: tokens, characters, bytes;
* for a model with a merge list (trained or loaded), the merge tree: every token is the merge
  of two earlier tokens, drawn as a tree down to the bytes.  Click a token in the text, or
  search the vocabulary, to see its tree.

The data goes into the page as JSON; a few lines of plain JavaScript draw the tree as SVG.
"""
from __future__ import annotations

import html
import json

from .visualise import BACKGROUNDS

# CSS colours close to the terminal's xterm-256 backgrounds (visualise.BACKGROUNDS)
_XTERM_RGB = {167: "#d75f5f", 179: "#d7af5f", 185: "#d7d75f", 77: "#5fd75f", 80: "#5fd7d7",
              68: "#5f87d7", 134: "#af5fd7"}
COLOURS = [_XTERM_RGB[c] for c in BACKGROUNDS]


def display_token(token: bytes) -> str:
    """A token's text for people: UTF-8 where it decodes, <xx> hex for the other bytes."""
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        out = []
        rest = token
        while rest:
            try:
                out.append(rest.decode("utf-8"))
                break
            except UnicodeDecodeError as e:
                out.append(rest[:e.start].decode("utf-8"))
                out.append("".join(f"<{b:02x}>" for b in rest[e.start:e.end]))
                rest = rest[e.end:]
        return "".join(out)


def _token_spans(token_values: list[bytes], ids: list[int]) -> str:
    spans = []
    running = 0
    last = None
    for token, token_id in zip(token_values, ids):
        text = token.decode("utf-8", errors="replace")
        colour = running % len(COLOURS)
        if colour == last:
            colour = (running + 1) % len(COLOURS)
        last = colour
        running += len(text)
        title = f"id {token_id} · {len(token)} bytes · {token!r}"
        spans.append(f'<span class="tok" style="background:{COLOURS[colour]}" data-id="{token_id}" '
                     f'title="{html.escape(title)}">{html.escape(text)}</span>')
    return "".join(spans)


def render_page(text: str, ids: list[int], token_values: list[bytes], *, name: str,
                merges: list[tuple[int, ...]] | None = None,
                vocab: list[bytes | None] | None = None) -> str:
    """The page.  `merges[i]` is (left, right), making id 256 + i (minbpe's and fastbpe's
    numbering), or (left, right, new id) for any numbering (tokenizer.json files);
    `vocab[id]` is the bytes of each id (None where unused).  Give both to get the merge-tree
    view."""
    n_bytes = len(text.encode("utf-8", errors="surrogatepass"))
    has_tree = merges is not None and vocab is not None
    parts = {}  # new id -> [left, right]
    for i, m in enumerate(merges if has_tree else []):
        parts[int(m[2]) if len(m) == 3 else 256 + i] = [int(m[0]), int(m[1])]
    data = {
        "parts": parts,
        "tokens": [None if t is None else display_token(t) for t in vocab] if has_tree else [],
    }
    # "</" inside a <script> would end it early
    data_json = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    tree_section = f"""
<section id="tree-section">
  <h2>Merge tree</h2>
  <p>Every token is the merge of two earlier tokens, down to single bytes. Click a token in
  the text above, or look one up by id or text.</p>
  <form id="lookup"><input id="query" placeholder="token id or text"> <button>show</button>
  <span id="lookup-msg"></span></form>
  <div id="tree"></div>
  <h3>Vocabulary ({len(vocab) if has_tree else 0} tokens)</h3>
  <input id="filter" placeholder="filter tokens containing...">
  <ol id="vocab" start="0"></ol>
</section>""" if has_tree else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>fastbpe: {html.escape(name)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
#text {{ font-family: ui-monospace, monospace; white-space: pre-wrap; line-height: 1.9;
         border: 1px solid #ccc; padding: 1em; }}
.tok {{ border-radius: 3px; cursor: pointer; }}
.tok:hover {{ outline: 2px solid #222; }}
#stats span {{ margin-right: 2em; }}
#tree svg text {{ font-family: ui-monospace, monospace; font-size: 12px; }}
#vocab {{ font-family: ui-monospace, monospace; max-height: 20em; overflow: auto;
          padding-left: 5em; }}  /* room for six-digit ids as list numbers */
#vocab li {{ cursor: pointer; }}
</style></head>
<body>
<h1>Tokens of {html.escape(name)}</h1>
<p id="stats"><span id="n-tokens">{len(ids)} tokens</span><span>{len(text)} characters</span>
<span>{n_bytes} bytes</span><span id="hover">hover a token to see its id and bytes</span></p>
<div id="text">{_token_spans(token_values, ids)}</div>
{tree_section}
<script id="data" type="application/json">{data_json}</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const hover = document.getElementById("hover");
for (const span of document.querySelectorAll(".tok")) {{
  span.addEventListener("mouseenter", () => {{ hover.textContent = span.title; }});
  span.addEventListener("click", () => showTree(Number(span.dataset.id)));
}}
const SVGNS = "http://www.w3.org/2000/svg";
function isMerged(id) {{ return Object.prototype.hasOwnProperty.call(DATA.parts, id); }}
// tidy layout of the binary merge tree: leaves left to right, a parent centred over its children
function layout(id, depth, state) {{
  const node = {{id, depth, children: []}};
  if (isMerged(id) && depth < 40) {{
    node.children = DATA.parts[id].map(c => layout(c, depth + 1, state));
    node.x = (node.children[0].x + node.children[1].x) / 2;
  }} else {{
    node.x = state.next++;
  }}
  state.depth = Math.max(state.depth, depth);
  return node;
}}
function label(id) {{ return JSON.stringify(DATA.tokens[id] ?? "?") + " " + id; }}
function showTree(id) {{
  const box = document.getElementById("tree");
  if (!box) return;
  box.textContent = "";
  if (!(id >= 0 && id < DATA.tokens.length)) return;
  const state = {{next: 0, depth: 0}};
  const root = layout(id, 0, state);
  const dx = 90, dy = 56;
  const svg = document.createElementNS(SVGNS, "svg");
  svg.setAttribute("width", Math.max(200, state.next * dx + 40));
  svg.setAttribute("height", (state.depth + 1) * dy + 30);
  const draw = (n) => {{
    const x = 20 + n.x * dx + dx / 2, y = 24 + n.depth * dy;
    for (const c of n.children) {{
      const line = document.createElementNS(SVGNS, "line");
      line.setAttribute("x1", x); line.setAttribute("y1", y + 6);
      line.setAttribute("x2", 20 + c.x * dx + dx / 2); line.setAttribute("y2", 24 + c.depth * dy - 14);
      line.setAttribute("stroke", "#999");
      svg.appendChild(line);
      draw(c);
    }}
    const t = document.createElementNS(SVGNS, "text");
    t.setAttribute("x", x); t.setAttribute("y", y); t.setAttribute("text-anchor", "middle");
    t.setAttribute("class", "node");
    t.textContent = label(n.id);
    t.style.cursor = "pointer";
    t.addEventListener("click", () => showTree(n.id));
    svg.appendChild(t);
  }};
  draw(root);
  box.appendChild(svg);
}}
const ORDER = Object.keys(DATA.parts).map(Number);
for (let id = 0; id < DATA.tokens.length; id++) if (!isMerged(id)) ORDER.push(id);
function fillVocab(filter) {{
  const list = document.getElementById("vocab");
  if (!list) return;
  list.textContent = "";
  let shown = 0;
  // merged tokens first (the interesting part), then the others (bytes, special tokens)
  for (const id of ORDER) {{
    if (shown >= 500) break;
    if (DATA.tokens[id] == null || (filter && !DATA.tokens[id].includes(filter))) continue;
    const li = document.createElement("li");
    li.value = id;
    li.textContent = isMerged(id)
      ? label(id) + "  =  " + label(DATA.parts[id][0]) + " + " + label(DATA.parts[id][1])
      : label(id);
    li.addEventListener("click", () => showTree(id));
    list.appendChild(li);
    shown++;
  }}
}}
if (DATA.tokens.length) {{
  document.getElementById("filter").addEventListener("input", e => fillVocab(e.target.value));
  document.getElementById("lookup").addEventListener("submit", e => {{
    e.preventDefault();
    const q = document.getElementById("query").value;
    let id = /^\\d+$/.test(q) ? Number(q) : DATA.tokens.indexOf(q);
    document.getElementById("lookup-msg").textContent = id >= 0 && id < DATA.tokens.length ? "" : "no such token";
    showTree(id);
  }});
  fillVocab("");
  // start with the longest token of the text
  let best = -1;
  for (const span of document.querySelectorAll(".tok")) {{
    const id = Number(span.dataset.id);
    if (DATA.tokens[id] != null && (best < 0 || DATA.tokens[id].length > DATA.tokens[best].length)) best = id;
  }}
  if (best >= 0) showTree(best);
}}
</script>
</body></html>
"""
