"""The README's Python examples, run as a reader would paste them: in a fresh process."""

import os
import subprocess
import sys

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


def run_readme_block(opening):
    """Runs the README's code block that starts with `opening`; returns what it printed."""
    readme = open(README).read()
    start = readme.index("```\n" + opening) + 4
    code = readme[start:readme.index("```", start)]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout
