"""workbench-doc.py SCREEN PAGE... - the screen of attn workbench that
attn-workbench(1) and attn(1) show is the one tmux captured (SCREEN): in
each page the literal block after the comment that names this test,
its \\[uXXXX] escapes read as the characters they are.  Prints a diff
and exits 1 when either differs."""
import difflib
import re
import sys

screen = open(sys.argv[1], encoding="utf-8").read().splitlines()


def block(lines, start, end):
    """The lines after the first that start matches, up to end's."""
    for k, line in enumerate(lines):
        if start(line):
            out = []
            for line2 in lines[k + 2:]:
                if end(line2):
                    return out
                out.append(line2)
    return None


shown = {}
for page in sys.argv[2:]:
    lines = open(page, encoding="utf-8").read().splitlines()
    shown[page] = [re.sub(r"\\\[u([0-9A-F]{4})\]",
                          lambda m: chr(int(m.group(1), 16)), l)
                   for l in block(lines, lambda l: "workbench-tmux.sh captures"
                                  in l, lambda l: l == ".Ed") or []]
failed = 0
for doc, lines in shown.items():
    if lines != screen:
        failed = 1
        print("%s does not show the screen captured:" % doc)
        sys.stdout.writelines(d + "\n" for d in difflib.unified_diff(
            lines or [], screen, doc, "tmux", lineterm=""))
sys.exit(failed)
