#!/bin/sh
# A tuning worker that loads every task and then never finishes a compile: TuningTest's timeout.
while read -r line; do
  case "$line" in
    *'"op":"task"'*) echo '{"ok":true}' ;;
    *) exec sleep 60 ;;  # exec: the kill that abandons the worker ends the sleep too
  esac
done
