#!/usr/bin/env python3
"""The library's module graph: which module uses which, its cycles, and the
arrows that point up ARCHITECTURE.md's layers.

Reads src/lib.rs and every module it declares (following `#[path]`, so a
module is found wherever it is filed), collects each file's `crate::` and `super::` paths (in `use` lines,
groups included, and inline paths), and prints:

  - the modules filed at a path other than their name's (each `#[path]`);
  - the top-level graph: for each top-level module, the top-level modules it
    uses;
  - its cycles (strongly connected components of more than one module), and
    the file-level knot (the largest strongly connected set of files);
  - with --layers, the arrows that point up the layers named in
    ARCHITECTURE.md's ```layers block (one layer per
    line, top first, its modules separated by spaces; a module in no layer is
    reported) and which of them the block names as allowed (a line
    `allow: a -> b  reason`).

--check exits 1 when a cycle spans two top-level modules, a `#[path]` is
left, or more than --max-up upward arrows (default 8) exist or any is not
allowed by name. Pure reading: it writes nothing.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments(text):
    """Text without comments and string contents (so a path in a doc
    comment or a message is not a use). Keeps line structure."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or (c == "'" and text.startswith("'\\u{", i)):
            j = text.find("'", i + 1 if text[i + 1] != "\\" else i + 3)
            out.append("' '")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


# Raw text is needed for `#[path = "..."]` (a string), so declarations are
# read before stripping; the regex skips comment lines itself.
MOD_DECL = re.compile(
    r'^[ \t]*(?P<attrs>(?:#\[[^\]]*\][ \t]*\n?[ \t]*)*)(?:pub(?:\([^)]*\))?[ \t]+)?mod[ \t]+(?P<name>' + IDENT + r')[ \t]*;',
    re.M,
)
PATH_ATTR = re.compile(r'#\[path\s*=\s*"([^"]+)"\]')


class Module:
    def __init__(self, path, file, filed_at_path, test=False):
        self.path = path  # ("crate", "bench", "latency")
        self.file = file
        self.filed_at_path = filed_at_path  # a #[path] or a macro put it there
        self.test = test  # declared #[cfg(test)], or inside such a module


def child_file(parent_file, is_mod_rs, name):
    d = os.path.dirname(parent_file)
    if not is_mod_rs:
        d = os.path.join(d, os.path.splitext(os.path.basename(parent_file))[0])
    for cand in (os.path.join(d, name + ".rs"), os.path.join(d, name, "mod.rs")):
        if os.path.exists(cand):
            return cand
    return None


def collect(root):
    modules = {}
    relocated = []
    stack = [(("crate",), os.path.join(root, "src", "lib.rs"), True, False)]
    while stack:
        mpath, file, is_mod_rs, test = stack.pop()
        modules[mpath] = Module(mpath, file, False, test)
        raw = open(file, encoding="utf-8").read()
        for m in MOD_DECL.finditer(raw):
            line_start = raw.rfind("\n", 0, m.start()) + 1
            if raw[line_start:m.start()].lstrip().startswith("//"):
                continue
            name = m.group("name")
            sub_test = test or "cfg(test)" in (m.group("attrs") or "")
            p = PATH_ATTR.search(m.group("attrs") or "")
            if p:
                f = os.path.normpath(os.path.join(os.path.dirname(file), p.group(1)))
                relocated.append((mpath + (name,), f, "#[path]"))
                # A file loaded through #[path] looks for its children beside it.
                stack.append((mpath + (name,), f, True, sub_test))
            else:
                f = child_file(file, is_mod_rs, name)
                if f is None:
                    continue  # cfg'd away or generated
                stack.append((mpath + (name,), f, os.path.basename(f) == "mod.rs", sub_test))
    for mpath, f, how in relocated:
        modules[mpath].filed_at_path = how
    return modules, relocated


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"]."""
    # `x as y` renames an import: the path is x's (drop the rename before
    # the spaces that tell it apart go).
    tree = re.sub(r"\s+as\s+" + IDENT, "", tree)
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, s):
        # split s at top-level commas
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        for part in parts:
            if "{" in part:
                head, rest = part.split("{", 1)
                walk(prefix + head, rest[: rest.rfind("}")])
            else:
                out.append(prefix + part)

    walk("", tree)
    return [u.rstrip(":") for u in out if u]


def references(text, mpath):
    """Module paths (tuples from "crate") that the text names."""
    refs = set()
    for m in re.finditer(r"\buse\s+([^;]*);", text):
        for u in expand_use(m.group(1)):
            r = resolve(u, mpath)
            if r:
                refs.add(r)
    for m in re.finditer(r"(?<![A-Za-z0-9_:])((?:\$?crate|super|self)(?:::(?:" + IDENT + r"|super))+)", text):
        r = resolve(m.group(1), mpath)
        if r:
            refs.add(r)
    return refs


def resolve(u, mpath):
    segs = [s for s in u.split("::") if s]
    if not segs:
        return None
    if segs[0] in ("crate", "$crate"):
        base, segs = ("crate",), segs[1:]
    elif segs[0] in ("super", "self"):
        base = mpath
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    return base + tuple(segs)


def without_test_modules(text):
    """Text (comments and strings already stripped) without its inline
    `#[cfg(test)] mod x { ... }` blocks, wherever in the file they are."""
    out, pos = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < pos:
            continue
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append(text[pos : m.start()])
        pos = i
    out.append(text[pos:])
    return "".join(out)


def owner(ref, modules):
    """The longest declared module that is a prefix of ref."""
    for k in range(len(ref), 0, -1):
        if ref[:k] in modules:
            return ref[:k]
    return None


def sccs(nodes, edges):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def read_layers(arch):
    text = open(arch, encoding="utf-8").read()
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    if not m:
        return None, {}
    layers, allowed = [], {}
    for line in m.group(1).splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        a = re.match(r"allow:\s*(" + IDENT + r")\s*->\s*(" + IDENT + r")\s*(.*)", line)
        if a:
            allowed[(a.group(1), a.group(2))] = a.group(3)
        else:
            layers.append(line.split())
    return layers, allowed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--layers", action="store_true", help="judge arrows against ARCHITECTURE.md's layers")
    ap.add_argument("--check", action="store_true", help="exit 1 unless the graph meets the rules")
    ap.add_argument("--max-up", type=int, default=8)
    ap.add_argument("--files", action="store_true", help="also list the files in the file-level knot")
    ap.add_argument(
        "--without-tests",
        action="store_true",
        help="the library as built: leave out #[cfg(test)] modules and inline test modules",
    )
    args = ap.parse_args()
    root = os.path.normpath(args.root)
    modules, relocated = collect(root)

    file_edges = defaultdict(set)
    top_edges = defaultdict(lambda: defaultdict(int))
    for mpath, mod in modules.items():
        if args.without_tests and mod.test:
            continue
        text = strip_comments(open(mod.file, encoding="utf-8").read())
        if args.without_tests:
            text = without_test_modules(text)
        for ref in references(text, mpath):
            o = owner(ref, modules)
            if o is None or o == mpath or o == ("crate",):
                continue
            file_edges[mpath].add(o)
            if len(mpath) > 1 and len(o) > 1 and mpath[1] != o[1]:
                top_edges[mpath[1]][o[1]] += 1

    tops = sorted({p[1] for p in modules if len(p) > 1})
    problems = []
    rel = lambda f: os.path.relpath(f, root)
    print(f"{len(modules) - 1} modules, {len(tops)} top-level" + (" (test modules left out)" if args.without_tests else ""))
    print(f"\nfiled elsewhere than their name says: {len(relocated)}")
    for mpath, f, how in sorted(relocated):
        print(f"  {'::'.join(mpath)}  ->  {rel(f)}  ({how})")
    if relocated:
        problems.append(f"{len(relocated)} modules filed through #[path]")

    print("\ntop-level uses (module: what it uses, with the number of files that do)")
    for t in tops:
        uses = ", ".join(f"{u}({n})" for u, n in sorted(top_edges[t].items()))
        print(f"  {t}: {uses or '-'}")

    top_cycles = sccs(tops, {t: set(v) for t, v in top_edges.items()})
    print(f"\ncycles across top-level modules: {len(top_cycles)}")
    for c in top_cycles:
        print(f"  {len(c)} modules: {' '.join(c)}")
    if top_cycles:
        problems.append(f"{len(top_cycles)} cycle(s) across top-level modules")

    file_cycles = sccs(list(modules), file_edges)
    biggest = max(file_cycles, key=len) if file_cycles else []
    cross = [c for c in file_cycles if len({p[1] for p in c if len(p) > 1}) > 1]
    print(f"file-level cycles: {len(file_cycles)}, {len(cross)} spanning folders; largest {len(biggest)} modules")
    if args.files and biggest:
        for p in biggest:
            print(f"  {'::'.join(p)}  ({rel(modules[p].file)})")

    if args.layers:
        layers, allowed = read_layers(os.path.join(root, "ARCHITECTURE.md"))
        if layers is None:
            print("\nARCHITECTURE.md has no ```layers block")
            problems.append("no layers named")
        else:
            level = {m: i for i, layer in enumerate(layers) for m in layer}
            missing = [t for t in tops if t not in level]
            for t in missing:
                problems.append(f"top-level module {t} is in no layer")
            up = []
            for a in tops:
                for b, n in sorted(top_edges[a].items()):
                    if a in level and b in level and level[b] < level[a]:
                        up.append((a, b, n))
            print(f"\narrows pointing up the layers: {len(up)}")
            for a, b, n in up:
                why = allowed.get((a, b))
                print(f"  {a} -> {b} ({n} files): {why if why else 'NOT NAMED in ARCHITECTURE.md'}")
                if why is None:
                    problems.append(f"upward arrow {a} -> {b} not named")
            if len(up) > args.max_up:
                problems.append(f"{len(up)} upward arrows, more than {args.max_up}")

    if args.check:
        if problems:
            print("\nmodule graph check FAILED:\n  " + "\n  ".join(problems))
            return 1
        print("\nmodule graph check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
