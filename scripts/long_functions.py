#!/usr/bin/env python3
"""Lists C++ functions in lib/ longer than a limit (default 80 lines), and files
longer than another (default 650 lines: "about 600").

A function may stay long when the comment right above it says why, with a line
containing "Long function:" (e.g. "// Long function: one state machine over the
bytes; split, its state would travel through every piece"); a file, when its
opening comment has a line containing "Long file:". Those are listed as
justified and do not count. Exit status 1 when an unjustified one is found
(outside the skipped paths), so CI or a reviewer can run it as a check:

  scripts/long_functions.py [--limit 80] [--file-limit 650] [--skip lib/fold --skip ...] [PATH...]

A brace counter, not a parser: comments, strings and character literals are
blanked first; a '{' at namespace or class scope whose text since the previous
';', '{' or '}' ends in ')' (plus qualifiers such as const, override, noexcept
or a trailing return type / initialiser list) opens a function. Lambdas and
local classes count toward the function that holds them.
"""
import argparse
import os
import re
import sys

MARKER = "long function:"
FILE_MARKER = "long file:"
SCOPE_KEYWORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def blank_comments_and_strings(text):
    """Comments, string and char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, line count) of every function body in a file."""
    raw = open(path, encoding="utf-8", errors="replace").read()
    text = blank_comments_and_strings(raw)
    text = re.sub(r"^[ \t]*#.*$", lambda m: " " * len(m.group(0)), text, flags=re.M)  # preprocessor lines
    found = []
    stack = []  # 'scope' (namespace/class: transparent) or 'other'
    last_stop = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c in ";}":
            if c == "}" and stack:
                stack.pop()
            last_stop = i + 1
        elif c == "{":
            head = text[last_stop:i]
            in_scope = all(s == "scope" for s in stack)
            if in_scope and SCOPE_KEYWORDS.search(head) and "(" not in head.split("{")[-1].split("=")[0]:
                stack.append("scope")
                last_stop = i + 1
            elif in_scope and re.search(r"\)\s*(const|override|final|noexcept|mutable|->[^{]*|:[^{]*|\s)*$", head, re.S):
                depth, j = 1, i + 1
                while j < len(text) and depth:
                    if text[j] == "{":
                        depth += 1
                    elif text[j] == "}":
                        depth -= 1
                    j += 1
                m = re.search(r"(operator\s*[^\s(]+|[~\w:]+)\s*\(", head)
                name = m.group(1) if m else head.strip().split("\n")[-1][:60]
                start_line = text.count("\n", 0, last_stop + len(head) - len(head.lstrip())) + 1
                end_line = text.count("\n", 0, j) + 1
                found.append((name, start_line, end_line - start_line + 1))
                i = j
                last_stop = j
                continue
            else:
                stack.append("other")
                last_stop = i + 1
        i += 1
    lines = raw.split("\n")
    result = []
    for name, start, count in found:
        # The comment block right above the signature.
        k = start - 2
        justified = False
        while k >= 0 and lines[k].strip().startswith("//"):
            if MARKER in lines[k].lower():
                justified = True
            k -= 1
        result.append((name, start, count, justified))
    return result


def file_length(path):
    """(line count, whether the file's opening comment says why it is long)."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    justified = False
    for line in lines:
        if not line.strip().startswith("//"):
            break
        justified |= FILE_MARKER in line.lower()
    return len(lines) - (1 if lines and lines[-1] == "" else 0), justified


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", default=["lib"])
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("--file-limit", type=int, default=650)
    ap.add_argument("--skip", action="append", default=[], help="path prefix to leave out (repeatable)")
    args = ap.parse_args()
    files = []
    for p in args.paths:
        if os.path.isfile(p):
            files.append(p)
        for root, _, names in os.walk(p):
            files += [os.path.join(root, f) for f in names if f.endswith((".cpp", ".h", ".cc", ".hpp"))]
    bad = 0
    for f in sorted(files):
        if any(os.path.normpath(f).startswith(os.path.normpath(s)) for s in args.skip):
            continue
        count, justified = file_length(f)
        if count > args.file_limit:
            print(f"{f}: {count} lines" + (" (justified)" if justified else ""))
            bad += not justified
        for name, start, count, justified in functions(f):
            if count > args.limit:
                print(f"{f}:{start}: {name}: {count} lines" + (" (justified)" if justified else ""))
                bad += not justified
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
