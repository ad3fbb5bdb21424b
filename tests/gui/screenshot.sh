#!/bin/sh
# Renders one loupe-gui panel headless (Xvfb, Mesa's software GL), the whole graph fitted, and
# checks the image (with the node boxes it drew, for the checker's --node).
# usage: screenshot.sh LOUPE_GUI PNG_CHECK OUT.png SCRIPT STEP PANEL [check options…]
# (GUI_ARGS in the environment: more loupe-gui options, such as --collapse-all)
set -e
gui=$1 check=$2 out=$3 script=$4 step=$5 panel=$6
shift 6
boxes=${out%.png}.boxes.tsv
rm -f "$out" "$boxes"
xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$gui" --script "$script" --step "$step" --panel "$panel" --fit --size 1600x1000 \
  --screenshot "$out" --boxes "$boxes" ${GUI_ARGS:-}
"$check" "$out" --size 1600x1000 --boxes "$boxes" "$@"
