#!/usr/bin/env bash
# Metadata-only acceptance run: a 1 TiB drive served by `nandlab serve` in metadata-only mode,
# exposed as /dev/loopN through nbdfuse; mkfs.ext4, mount, write a few GiB of files, unmount,
# e2fsck -f -n; report the server's RSS and the image's allocated size (from the stats file).
# Needs root, /dev/fuse, loop devices, nbdfuse. Usage (repo root, after `make build`):
#   bash experiments/serve/tib.sh [GiB_TO_WRITE]
set -euo pipefail
gib=${1:-4}
bin=$PWD/target/release/nandlab
out=$PWD/experiments/serve/results
dir=$(mktemp -d)
mkdir -p "$dir/fuse" "$dir/mnt" "$out"
loop=""; fpid=""; spid=""
cleanup() {
  mountpoint -q "$dir/mnt" && umount "$dir/mnt"
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  [ -n "$fpid" ] && { fusermount3 -u "$dir/fuse" 2>/dev/null || umount "$dir/fuse"; wait "$fpid" 2>/dev/null; }
  [ -n "$spid" ] && { kill -TERM "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }
  rm -rf "$dir"
}
trap cleanup EXIT
"$bin" serve --image "$dir/tib.img" --unix "$dir/nbd.sock" --stats-json "$out/tib-stats.json" \
  --set device.logical_bytes=1099511627776 --set serve.store=metadata-only \
  --set serve.emulate_latency=false > "$dir/serve.log" 2>&1 &
spid=$!
for _ in $(seq 1200); do [ -S "$dir/nbd.sock" ] && break; sleep 0.1; done
nbdfuse "$dir/fuse/disk" --unix "$dir/nbd.sock" & fpid=$!
for _ in $(seq 100); do [ -f "$dir/fuse/disk" ] && break; sleep 0.1; done
loop=$(losetup -f --show --direct-io=on "$dir/fuse/disk")
t0=$(date +%s.%N)
mkfs.ext4 -q -F "$loop"
t1=$(date +%s.%N)
mount "$loop" "$dir/mnt"
for i in $(seq 1 "$gib"); do
  mkdir -p "$dir/mnt/d$i"
  dd if=/dev/urandom of="$dir/mnt/d$i/big" bs=1M count=1024 status=none
  for j in $(seq 1 100); do echo "file $i $j" > "$dir/mnt/d$i/small$j"; done
done
sync
t2=$(date +%s.%N)
umount "$dir/mnt"
e2fsck -f -n "$loop" > "$dir/fsck.log" 2>&1 && fsck="clean" || fsck="ERRORS"
tail -1 "$dir/fsck.log"
sleep 1.5  # one more stats period
python3 - "$out/tib-stats.json" "$gib" "$fsck" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" <<'PY' | tee "$out/tib.txt"
import json, sys
s = json.load(open(sys.argv[1]))
v = s["serve"]; m = s["metrics"]
print(f"1 TiB ext4, metadata-only: mkfs {float(sys.argv[4]):.1f} s, {sys.argv[2]} GiB of files "
      f"written in {float(sys.argv[5]):.1f} s, e2fsck -f -n: {sys.argv[3]}")
print(f"server RSS {v['rss_bytes']/2**30:.2f} GiB; image {v['image_bytes']/2**40:.2f} TiB apparent, "
      f"{v['image_allocated_bytes']/2**30:.2f} GiB allocated; pages kept {v['metadata_pages_kept']}, "
      f"dropped {v['data_pages_dropped']}; host writes {m['host_write_bytes']/2**30:.2f} GiB")
PY
