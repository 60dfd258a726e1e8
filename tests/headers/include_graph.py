#!/usr/bin/env python3
"""Checks the layering of include/gpuprof: no include cycle among the headers
and no two headers with the same file name (an #include "table.hpp" should
never depend on which directory it is written in).

Usage: include_graph.py INCLUDE_DIR   (exit 0: clean, 1: a problem, 2: usage)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def headers(root):
    found = []
    for directory, _, files in os.walk(root):
        found += [os.path.join(directory, f) for f in files if f.endswith(".hpp")]
    return sorted(found)


def edges(path):
    with open(path, encoding="utf-8") as source:
        text = source.read()
    here = os.path.dirname(path)
    return [os.path.normpath(os.path.join(here, name)) for name in INCLUDE.findall(text)]


def find_cycle(graph):
    """One include cycle as a list of headers, or None (depth-first search)."""
    state = {}  # absent: unvisited, 1: on the stack, 2: done
    stack = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for target in graph.get(node, []):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: include_graph.py INCLUDE_DIR", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    files = headers(root)
    problems = []
    by_name = {}
    for path in files:
        by_name.setdefault(os.path.basename(path), []).append(os.path.relpath(path, root))
    for name, paths in sorted(by_name.items()):
        if len(paths) > 1:
            problems.append(f"two headers named {name}: {', '.join(paths)}")
    graph = {path: edges(path) for path in files}
    for path, targets in sorted(graph.items()):
        for target in targets:
            if target not in graph:
                problems.append(f"{os.path.relpath(path, root)} includes a missing header {os.path.relpath(target, root)}")
    cycle = find_cycle(graph)
    if cycle:
        problems.append("include cycle: " + " -> ".join(os.path.relpath(p, root) for p in cycle))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{len(files)} headers: no include cycle, no two with the same name")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
