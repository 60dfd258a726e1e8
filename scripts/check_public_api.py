#!/usr/bin/env python3
"""Nothing public needs `detail::`.

Two checks, at the level of tokens (comments and string literals are blanked
first; this is not a C++ parser):

1. Outside include/ (and cli/, the command-line plumbing the library keeps
   for its own programs), only tests name `detail::`: a C++, CUDA or Python source
   file under tools/, python/, examples/, bench/ or any other folder that
   writes `detail::` fails, unless it is a test (under tests/ or fuzz/, or in
   a folder named tests). So does one that includes <gpuprof/detail/...>.
2. A public header (include/gpuprof/*.hpp and include/gpuprof/report/*.hpp,
   not detail/) exposes no detail type: a class head that derives publicly
   from a `detail::` type, and a declaration in a public part of the header
   (namespace scope outside `namespace detail`, or a class's public section)
   that names `detail::` in its parameters, return type, base or alias, fail.
   Function bodies, initializers after `=`, friend declarations, private and
   protected sections, out-of-class member definitions (`Class::f(...)`) and
   macros are not looked at.

Prints each finding as FILE:LINE: why; exit 1 if any.

usage: check_public_api.py [REPOSITORY_ROOT]   (default: the parent of scripts/)
"""
import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".cc", ".py"}
TEST_FOLDERS = {"tests", "fuzz"}
SKIPPED_FOLDERS = {"build", ".git", "include", "cli", "docs"}  # cli/: the library's own plumbing
DETAIL = re.compile(r"\bdetail::")
DETAIL_INCLUDE = re.compile(r"\s*#\s*include\s*[<\"]gpuprof/detail/")


def blank(text, python=False):
    """The text with comments and string/char literals replaced by spaces, newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if python and text.startswith(('"""', "'''"), i):
            j = text.find(text[i : i + 3], i + 3)
            j = n if j < 0 else j + 3
        elif python and c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif not python and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif not python and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif not python and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i)
            delimiter = text[i + 2 : open_paren]
            j = text.find(")" + delimiter + '"', open_paren)
            j = n if j < 0 else j + len(delimiter) + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            if not python and c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(c)
                i += 1
                continue
        else:
            out.append(c)
            i += 1
            continue
        out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
        i = j
    return "".join(out)


def is_test(relative):
    return any(part in TEST_FOLDERS for part in relative.parts)


def outside_include(root):
    findings = []
    tops = [top for top in sorted(root.iterdir()) if top.name not in SKIPPED_FOLDERS and not top.name.startswith("build")]
    for path in (path for top in tops for path in ([top] if top.is_file() else sorted(top.rglob("*")))):
        relative = path.relative_to(root)
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file() or is_test(relative):
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        text = blank(raw, python=path.suffix == ".py")
        for number, (line, raw_line) in enumerate(zip(text.splitlines(), raw.splitlines()), 1):
            if DETAIL.search(line):
                findings.append(f"{relative}:{number}: names detail:: outside include/ (only tests may)")
            elif DETAIL_INCLUDE.match(raw_line):
                findings.append(f"{relative}:{number}: includes a detail/ header outside include/ (only tests may)")
    return findings


CLASS_HEAD = re.compile(r"\b(class|struct|union)\s+(?:\w+\s+)*?(\w+)\s*(?:final\s*)?(?::(?P<bases>[^{]*))?$")
NAMESPACE = re.compile(r"\bnamespace\s*(\w*)\s*$")
OUT_OF_CLASS = re.compile(r"(?<![:\w])[A-Z]\w*::~?\w+\s*\(")
ACCESS = re.compile(r"\b(public|private|protected)\s*:(?!:)")


def public_part(statement):
    """What of a declaration is its interface: the text before a top-level `=` (unless an alias)
    or a constructor's member initializers. A using-declaration (`using detail::f;`) makes a
    name public on purpose and is not looked at."""
    if re.match(r"\s*using\s+[\w:]+\s*$", statement):
        return ""
    if OUT_OF_CLASS.search(statement):  # Class::member(...) defined outside: its class says its access
        return ""
    if re.match(r"\s*(template\s*<.*>\s*)?using\b", statement, re.S):
        return statement
    initializers = re.search(r"\)\s*(?:noexcept\s*)?:(?!:)", statement)
    if initializers:
        statement = statement[: initializers.start() + 1]
    depth = 0
    for i, c in enumerate(statement):
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        elif c == "=" and depth <= 0 and statement[i + 1 : i + 2] != "=" and statement[i - 1 : i] not in "=!<>":
            return statement[:i]
    return statement


def header_findings(path, relative):
    text = blank(path.read_text(encoding="utf-8", errors="replace"))
    # Preprocessor lines (with their continuations) are not declarations.
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.M)
    # The namespace macros open and close braces the text does not show.
    text = re.sub(r"\bGPUPROF_NAMESPACE_(BEGIN|END)\b", lambda m: " " * len(m.group(0)), text)
    findings = []
    # The scope stack: ("namespace", is_detail), ("class", access), ("block", None).
    stack = [("namespace", False)]
    statement, statement_line, line = "", 1, 1

    def exposed():
        if any(kind == "namespace" and detail for kind, detail in stack):
            return False
        if any(kind == "block" or access == "hidden" for kind, access in stack):
            return False
        kind, access = stack[-1]
        return kind == "namespace" or access == "public"

    for c in text:
        if c == "\n":
            line += 1
        if not c.isspace() and not statement.strip():
            statement_line = line
        if c not in "{};":
            statement += c
            # An access label ends the statement before it.
            match = ACCESS.search(statement[-12:]) if c == ":" else None
            if match and stack[-1][0] == "class":
                if stack[-1][1] != "hidden":  # a class nested in a private part stays private
                    stack[-1] = ("class", match.group(1))
                statement = ""
            continue
        head = statement.strip()
        if c == "{":
            namespace = NAMESPACE.search(head)
            klass = CLASS_HEAD.search(head) if "(" not in head or head.startswith("template") else None
            if namespace:
                stack.append(("namespace", namespace.group(1) == "detail"))
            elif klass and not re.search(r"\benum\b", head):
                bases = klass.group("bases") or ""
                default = "private" if klass.group(1) == "class" else "public"
                if exposed():
                    for base in bases.split(","):
                        access = re.match(r"\s*(?:virtual\s+)?(public|private|protected)?", base).group(1) or default
                        if access == "public" and DETAIL.search(base):
                            findings.append(
                                f"{relative}:{statement_line}: class {klass.group(2)} derives publicly from "
                                + re.sub(r"^\s*(virtual\s+)?public\s+", "", base).strip()
                            )
                if not exposed():
                    stack.append(("class", "hidden"))
                else:
                    stack.append(("class", "private" if klass.group(1) == "class" else "public"))
            else:
                if exposed() and head and not head.startswith("friend") and DETAIL.search(public_part(head)):
                    findings.append(f"{relative}:{statement_line}: public declaration names a detail type: {' '.join(public_part(head).split())[:100]}")
                stack.append(("block", None))
        elif c == "}":
            if len(stack) > 1:
                stack.pop()
        elif c == ";":
            if exposed() and head and not head.startswith("friend") and DETAIL.search(public_part(head)):
                findings.append(f"{relative}:{statement_line}: public declaration names a detail type: {' '.join(public_part(head).split())[:100]}")
        statement = ""
    return findings


def public_headers(root):
    findings = []
    base = root / "include" / "gpuprof"
    for path in sorted(list(base.glob("*.hpp")) + list((base / "report").glob("*.hpp"))):
        findings += header_findings(path, path.relative_to(root))
    return findings


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    findings = outside_include(root) + public_headers(root)
    for finding in findings:
        print(finding)
    headers = len(list((root / "include" / "gpuprof").glob("*.hpp"))) + len(
        list((root / "include" / "gpuprof" / "report").glob("*.hpp"))
    )
    print(f"{headers} public headers and the sources outside include/: {len(findings)} uses of detail:: in public")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
