#!/usr/bin/env python3
"""geomon-profile(5) from docs/profile-reference.md: the one description of every profile key
(checked against the loader by Tests/GeomonConfigTests/ProfileReferenceTests.swift) becomes the
man page, so the two never disagree.

Usage: scripts/profile-man.py docs/profile-reference.md VERSION DATE > geomon-profile.5
"""
import re
import sys


def inline(text):
    text = text.replace("\\", "\\e")
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)          # links: their text
    out, parts = "", re.split(r"(`[^`]*`)", text)
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out += "\\fB" + part[1:-1].replace("-", "\\-") + "\\fR"
        else:
            part = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", part)
            part = re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"\\fI\1\\fR", part)
            out += part.replace("-", "\\-")
    out = out.replace("\\\\|", "|")
    return out


def line_out(text):
    return "\\&" + text if text.startswith((".", "'")) else text


def main():
    source, version, date = sys.argv[1], sys.argv[2], sys.argv[3]
    lines = open(source, encoding="utf-8").read().split("\n")
    out = [f'.TH GEOMON\\-PROFILE 5 "{date}" "geomon {version}" "File Formats"',
           ".SH NAME", "geomon\\-profile \\- the YAML profile of geomon(1)", ".SH DESCRIPTION"]
    in_code, header, paragraph = False, None, []
    # A bullet's text, continuation lines included: one .IP with all of it.
    bullet = []
    # Whether the last block was indented (a table entry or a bullet): what follows that is
    # not another one starts at the margin again.
    indented = False

    def flush():
        nonlocal indented
        if bullet:
            out.append(".IP \\(bu 2")
            out.append(line_out(inline(" ".join(bullet))))
            bullet.clear()
            indented = True
        if paragraph:
            out.append(".PP")
            out.append(line_out(inline(" ".join(paragraph))))
            paragraph.clear()
            indented = False

    for raw in lines[1:]:                       # the first line is the document's title
        if raw.startswith("```"):
            flush()
            if in_code:
                out.append(".EE")
            else:
                if indented:
                    out.append(".PP")           # an example after a list is not part of its last entry
                    indented = False
                out.append(".EX")
            in_code = not in_code
            continue
        if in_code:
            out.append(line_out(raw.replace("\\", "\\e").replace("-", "\\-")))
            continue
        if raw.startswith("## ") or raw.startswith("### "):
            flush()
            title = inline(raw.lstrip("#").strip())
            out.append((".SH " if raw.startswith("## ") else ".SS ") + '"' + title.replace('"', "") + '"')
            header, indented = None, False
            continue
        if raw.startswith("|"):
            flush()
            # `\|` is a bar inside a cell (Markdown's escape), not a cell boundary.
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", raw.strip().strip("|"))]
            if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                continue
            if header is None:
                header = cells
                continue
            out.append(".TP")
            out.append(line_out(inline(cells[0])))
            rest = [f"{h}: {c}" if h and i < len(cells) - 1 else c
                    for i, (h, c) in enumerate(zip(header[1:], cells[1:]), start=1) if c]
            out.append(line_out(inline("; ".join(rest))))
            indented = True
            continue
        header = None
        if not raw.strip():
            flush()
            continue
        if raw.lstrip().startswith(("- ", "* ")):
            flush()
            bullet.append(raw.lstrip()[2:].strip())
            continue
        if bullet and raw.startswith(" "):
            bullet.append(raw.strip())          # the bullet goes on
            continue
        if bullet:
            flush()                             # a paragraph after a bullet, without a blank line
        paragraph.append(raw.strip())
    flush()
    out += [".SH SEE ALSO", ".BR geomon (1);", "/usr/share/doc/geomon/docs/profile\\-reference.md."]
    print("\n".join(out))

main()
