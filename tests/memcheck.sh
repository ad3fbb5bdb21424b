#!/usr/bin/env bash
# Replays every session under valgrind's memcheck: any invalid read/write or use of freed memory
# fails the test, even when the output happens to be right.
set -u
loupe="$1"
shift
status=0
for session in "$@"; do
  if ! valgrind -q --error-exitcode=9 "$loupe" --check "$session" > /tmp/loupe-memcheck.$$ 2>&1; then
    echo "memcheck failed on $session:"
    head -40 /tmp/loupe-memcheck.$$
    status=1
  fi
done
rm -f /tmp/loupe-memcheck.$$
[ $status -eq 0 ] && echo "memcheck: $# sessions clean"
exit $status
