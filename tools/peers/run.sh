#!/usr/bin/env bash
# The peer comparison (see README.md): archetool's scene loads and saves against Bevy's and
# flecs's on the same 100,000-entity worlds. Not run in CI: the peers take many minutes to
# build. Run from anywhere:
#   tools/peers/run.sh
# Prints the raw lines of each side, then one ratio line per comparison, in the form of
# `archetool bench --quick` (ours / peer: below 1, ours is faster).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
jobs="${CARGO_BUILD_JOBS:-2}"

echo "== building archetool and the peers in release (-j $jobs)" >&2
cargo build --release -j "$jobs" -p archetool --manifest-path "$root/Cargo.toml" >&2
# The peers always build into their own target directory, apart from the project's.
cargo build --release -j "$jobs" --manifest-path "$here/Cargo.toml" --target-dir "$here/target" >&2
ours_bin="${CARGO_TARGET_DIR:-$root/target}/release/archetool"
peers_bin="$here/target/release"

# The same worlds: archetool's scene benchmarks are stated at 100,000 entities, and so the peers
# run at that size (their default).
echo "== archetool bench --quick scene_json, scene_instances_json" >&2
ours=$("$ours_bin" bench --quick scene_json)
instances=$("$ours_bin" bench --quick scene_instances_json)
echo "== peer-bevy" >&2
bevy=$("$peers_bin/peer-bevy")
echo "== peer-flecs" >&2
flecs=$("$peers_bin/peer-flecs")

printf '%s\n' "$ours" "$instances" "$bevy" "$flecs"
echo

# `ours X ms` of one of our ratio lines, or the `ms=` of a peer's line.
ours_ms() { printf '%s\n' "$1" | sed -n "s/^$2 .*(ours \([0-9.]*\) ms.*/\1/p"; }
peer_ms() { printf '%s\n' "$1" | sed -n "s/^$2 ms=\([0-9.]*\) .*/\1/p"; }
compare() { # NAME OURS_MS PEER PEER_MS
    if [ -z "$2" ] || [ -z "$4" ]; then
        echo "$1 skipped (a side printed no time)"
        return
    fi
    awk -v name="$1" -v ours="$2" -v peer="$3" -v theirs="$4" 'BEGIN {
        printf "%s ratio=%.2f (ours %.2f ms, %s %.2f ms, n=100000)\n", name, ours / theirs, ours, peer, theirs
    }'
}

compare scene_json_load_vs_bevy_ron_load \
    "$(ours_ms "$ours" scene_json_load_vs_hecs_row)" bevy "$(peer_ms "$bevy" bevy_scene_ron_load)"
compare scene_json_save_vs_bevy_ron_save \
    "$(ours_ms "$ours" scene_json_save_vs_hecs_row)" bevy "$(peer_ms "$bevy" bevy_scene_ron_save)"
compare scene_json_load_vs_flecs_json_load \
    "$(ours_ms "$ours" scene_json_load_vs_hecs_row)" flecs "$(peer_ms "$flecs" flecs_json_load)"
compare scene_instances_json_load_vs_flecs_prefab_json_load \
    "$(ours_ms "$instances" scene_instances_json_load_vs_hecs_row)" flecs \
    "$(peer_ms "$flecs" flecs_prefab_instances_json_load)"
