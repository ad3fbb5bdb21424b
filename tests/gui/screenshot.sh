#!/bin/sh
# Renders one loupe-gui panel headless (Xvfb, Mesa's software GL), the whole graph fitted, and
# checks the image.
# usage: screenshot.sh LOUPE_GUI PNG_CHECK OUT.png SCRIPT STEP PANEL [check options…]
# (GUI_ARGS in the environment: more loupe-gui options, such as --collapse-all)
set -e
gui=$1 check=$2 out=$3 script=$4 step=$5 panel=$6
shift 6
rm -f "$out"
xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$gui" --script "$script" --step "$step" --panel "$panel" --fit --size 1600x1000 --screenshot "$out" ${GUI_ARGS:-}
"$check" "$out" --size 1600x1000 "$@"
