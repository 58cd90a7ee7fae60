#!/usr/bin/env python3
"""Which folders of Sources/Agent use which: the folder graph docs/design.md shows.

Swift has no imports between folders of one module, so "uses" is read off the code: a folder
uses another when one of its files names a type (struct, class, enum, actor, protocol,
typealias) declared at top level in the other. Comments and string literals are ignored. Prints
the edges, the cycles (pairs of folders using each other, and longer loops), and a Mermaid
graph for docs/design.md. Exit status 1 when there is a cycle, so a test can hold the line.

Usage: scripts/agent-graph.py [--mermaid] [ROOT]   (ROOT defaults to Sources/Agent)
"""
import os
import re
import sys

DECLARATION = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|fileprivate|package|final|indirect|nonisolated)\s+)*"
    r"(?:struct|class|enum|actor|protocol|typealias)\s+([A-Z]\w*)", re.M)
IDENTIFIER = re.compile(r"\b[A-Z]\w*\b")


def strip(source):
    """The code without comments and string literals (a good-enough lexer for this purpose)."""
    source = re.sub(r'#?"""[\s\S]*?"""#?', '""', source)
    source = re.sub(r"/\*[\s\S]*?\*/", "", source)
    source = re.sub(r"//[^\n]*", "", source)
    source = re.sub(r'#"(?:[^"\\]|\\.)*"#', '""', source)
    source = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', source)
    return source


def folder_of(root, path):
    relative = os.path.relpath(path, root)
    parts = relative.split(os.sep)
    return parts[0] if len(parts) > 1 else "."


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = arguments[0] if arguments else os.path.join(os.path.dirname(__file__), "..", "Sources", "Agent")
    files = []
    for directory, _, names in os.walk(root):
        files += [os.path.join(directory, n) for n in names if n.endswith(".swift")]
    code = {path: strip(open(path, encoding="utf-8").read()) for path in sorted(files)}
    owner = {}
    for path, text in code.items():
        for name in DECLARATION.findall(text):
            owner.setdefault(name, folder_of(root, path))
    edges = {}
    for path, text in code.items():
        source = folder_of(root, path)
        for name in set(IDENTIFIER.findall(text)):
            target = owner.get(name)
            if target and target != source:
                edges.setdefault((source, target), set()).add(name)
    folders = sorted({f for pair in edges for f in pair} | set(owner.values()))
    cycles = find_cycles(folders, {(a, b) for a, b in edges})
    if "--mermaid" in sys.argv:
        def label(folder):
            return "AgentRunner" if folder == "." else folder
        print("```mermaid\ngraph LR")
        for (a, b) in sorted(edges):
            print(f"  {label(a)} --> {label(b)}")
        print("```")
    else:
        for (a, b), names in sorted(edges.items()):
            print(f"{a} -> {b}: {', '.join(sorted(names))}")
        for cycle in cycles:
            print("cycle: " + " -> ".join(cycle + [cycle[0]]))
        print(f"{len(folders)} folders, {len(edges)} edges, {len(cycles)} cycles")
    return 1 if cycles else 0


def find_cycles(nodes, edges):
    """Strongly connected components of more than one folder, each as a list (Tarjan)."""
    index, low, stack, on_stack, result, counter = {}, {}, [], set(), [], [0]
    successors = {n: sorted(b for a, b in edges if a == n) for n in nodes}

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in successors[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in nodes:
        if node not in index:
            visit(node)
    return result


if __name__ == "__main__":
    sys.exit(main())
