#!/usr/bin/env python3
"""Every relative link and image in README.md, examples/README.md and docs/**/*.md resolves.

A target is a Markdown link or image, [text](target) or ![alt](target), or an
HTML href/src, outside code blocks and inline code. Absolute URLs (http:,
https:, mailto:, ...) are not followed: CI has no network. A relative target
must name a file or folder of the repository; its #anchor, where it points
into a Markdown file, must be a heading of that file as GitHub spells it (the
heading lowercased, punctuation dropped, spaces as hyphens, "-1", "-2" ... for
repeats). Prints each broken link as FILE:LINE: TARGET: why; exit 1 if any.

usage: check_doc_links.py [REPOSITORY_ROOT]   (default: the parent of scripts/)
"""
import re
import sys
from pathlib import Path

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")
# A fence (CommonMark): up to 3 spaces, then 3+ backticks or tildes; a backtick
# fence's info string has no backtick (so "```` ```cpp ````" is inline code).
FENCE = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
INLINE_CODE = re.compile(r"(`+).*?\1")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def outside_fences(text):
    """The text with fenced code blocks blanked out, lines kept in place."""
    lines, fence = [], None  # the open fence's characters, or None outside a block
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and match and match.group(1).startswith(fence) and not line.strip(" `~"):
            fence = None
        elif fence is None:
            lines.append(line)
            continue
        lines.append("")
    return "\n".join(lines)


def prose(text):
    """outside_fences(text) with inline code blanked out too: where links are looked for."""
    return INLINE_CODE.sub(lambda code: " " * len(code.group(0)), outside_fences(text))


def slug(heading):
    """GitHub's anchor for a heading: lowercase, punctuation out, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for line in outside_fences(path.read_text(encoding="utf-8")).splitlines():
            match = HEADING.match(line)
            if match:
                base = slug(match.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def problem(source, target, root):
    """Why `target`, written in `source`, does not resolve; None when it does."""
    if SCHEME.match(target) or target.startswith("//"):
        return None
    path_part, _, anchor = target.partition("#")
    destination = (source.parent / path_part).resolve() if path_part else source.resolve()
    try:
        destination.relative_to(root)
    except ValueError:
        return "points outside the repository"
    if not destination.exists():
        return "no such file or folder"
    if anchor and destination.is_file() and destination.suffix == ".md":
        if anchor not in anchors(destination):
            return f"no heading #{anchor} in {destination.relative_to(root)}"
    return None


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip().splitlines()[-1])
        return 0 if len(argv) == 2 else 2
    root = Path(argv[1] if len(argv) == 2 else Path(__file__).resolve().parent.parent).resolve()
    documents = [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
    documents += [path for path in [root / "examples" / "README.md"] if path.is_file()]
    broken = checked = 0
    for document in documents:
        text = prose(document.read_text(encoding="utf-8"))
        for match in sorted([*LINK.finditer(text), *HTML.finditer(text)], key=lambda m: m.start()):
            checked += 1
            target = match.group(1)
            why = problem(document, target, root)
            if why:
                broken += 1
                number = text.count("\n", 0, match.start(1)) + 1
                print(f"{document.relative_to(root)}:{number}: {target}: {why}")
    print(f"{checked} links and images in {len(documents)} files, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
