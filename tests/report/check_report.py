"""Writes a session's report with `loupe --report` and opens it in headless Chromium (Debian's
chromium): the page renders, its script runs (the body says data-ready), the console stays
silent (no error, no refused load), the file is under a size limit, and a search carried in the
link folds the steps without the text and outlines the graph boxes with it.

    check_report.py LOUPE SESSION OUT.html MAX_BYTES SEARCH HIDDEN_STEPS MATCHED_BOXES"""

import os
import re
import subprocess
import sys
import tempfile


def main():
    loupe, session, out, max_bytes, search, hidden, matched = sys.argv[1:]
    done = subprocess.run([loupe, "--report", session, out], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    size = os.path.getsize(out)
    assert size < int(max_bytes), f"{out} is {size} bytes, over {max_bytes}"
    with tempfile.TemporaryDirectory() as profile:
        page = subprocess.run(
            ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0",
             f"--user-data-dir={profile}", "--dump-dom",
             "file://" + os.path.abspath(out) + "#search=" + search],
            capture_output=True, text=True, timeout=120)
    dom = page.stdout
    console = [line for line in page.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, "the page logged:\n" + "\n".join(console)
    assert '<body data-ready="yes">' in dom, "the page's script did not run"
    assert dom.count('class="step hidden"') == int(hidden), dom.count('class="step hidden"')
    assert dom.count('class="node match"') == int(matched), dom.count('class="node match"')
    print(f"ok {out}: {size} bytes; search {search!r} hid {hidden} steps, outlined {matched} boxes")


if __name__ == "__main__":
    main()
