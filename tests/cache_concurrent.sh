#!/usr/bin/env bash
# Two loupe processes build the same network at once on one empty kernel cache: both succeed
# with the same output, the cache ends up with whole entries and no temporary files, and a third
# process finds every kernel there and prints the same again.
set -eu
loupe="$1"
script="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export XDG_CACHE_HOME="$dir"
"$loupe" "$script" > "$dir/a.out" 2>&1 &
a=$!
"$loupe" "$script" > "$dir/b.out" 2>&1 &
b=$!
wait $a
wait $b
cmp "$dir/a.out" "$dir/b.out"
if ls "$dir/loupe/kernels" | grep -v '\.kernel$'; then
  echo "cache folder holds something besides entries"
  exit 1
fi
"$loupe" "$script" > "$dir/c.out" 2>&1
cmp "$dir/a.out" "$dir/c.out"
printf ':model mlp\n:build opt_level=3\n:cache\n' > "$dir/warm.loupe"
"$loupe" "$dir/warm.loupe" | grep -q ' 0 compiled (hit rate 100%), 0 stored$'
echo "two builds at once on one cache: same output, entries whole, then every kernel cached"
