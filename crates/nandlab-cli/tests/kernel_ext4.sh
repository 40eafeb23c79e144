#!/usr/bin/env bash
# A real kernel block device on `nandlab serve`: nbdfuse exposes the NBD export as a file,
# `losetup --direct-io=on` turns it into /dev/loopN, then mkfs.ext4, mount, write files, sync,
# unmount, `e2fsck -f -n` must be clean; the server is restarted on the same image and the
# files and e2fsck are checked again (in metadata-only mode: e2fsck and the file list only).
# Exit 77 = skipped (missing tool or privilege).
# Usage: kernel_ext4.sh NANDLAB_BINARY WORKDIR [--set key=value]...
set -uo pipefail
bin=$1; dir=$2; shift 2
for tool in nbdfuse losetup mkfs.ext4 e2fsck mount umount; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
[ -e /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for losetup and mount"; exit 77; }
losetup -f >/dev/null 2>&1 || { echo "SKIP: no free loop device"; exit 77; }
rm -rf "$dir"; mkdir -p "$dir/fuse" "$dir/mnt"
loop=""; fuse_pid=""; srv=""
cleanup() {
  mountpoint -q "$dir/mnt" && umount "$dir/mnt"
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  if [ -n "$fuse_pid" ]; then fusermount3 -u "$dir/fuse" 2>/dev/null || umount "$dir/fuse" 2>/dev/null; wait "$fuse_pid" 2>/dev/null; fi
  [ -n "$srv" ] && kill -TERM "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
  loop=""; fuse_pid=""; srv=""
}
trap cleanup EXIT
attach() { # extra serve args...
  "$bin" serve --image "$dir/disk.img" --unix "$dir/nbd.sock" --set serve.emulate_latency=false "$@" \
    > "$dir/serve.log" 2>&1 &
  srv=$!
  for _ in $(seq 100); do [ -S "$dir/nbd.sock" ] && break; sleep 0.05; done
  nbdfuse "$dir/fuse/disk" --unix "$dir/nbd.sock" & fuse_pid=$!
  for _ in $(seq 100); do [ -f "$dir/fuse/disk" ] && break; sleep 0.05; done
  loop=$(losetup -f --show --direct-io=on "$dir/fuse/disk") || { echo "FAIL: losetup"; exit 1; }
}
attach --set device.logical_bytes=268435456 "$@"
mkfs.ext4 -q -F "$loop" || { echo "FAIL: mkfs.ext4"; exit 1; }
mount "$loop" "$dir/mnt" || { echo "FAIL: mount"; exit 1; }
for i in $(seq 1 16); do head -c $((i * 311 * 1024)) /dev/urandom > "$dir/mnt/file$i"; done
mkdir -p "$dir/mnt/tree/a/b"; for i in $(seq 1 200); do echo "small $i" > "$dir/mnt/tree/a/b/s$i"; done
sync
before=$(cd "$dir/mnt" && find . -type f -print0 | sort -z | xargs -0 sha1sum | sha1sum)
umount "$dir/mnt"
e2fsck -f -n "$loop" > "$dir/fsck1.log" 2>&1 || { cat "$dir/fsck1.log"; echo "FAIL: e2fsck"; exit 1; }
cleanup
attach "$@"
e2fsck -f -n "$loop" > "$dir/fsck2.log" 2>&1 || { cat "$dir/fsck2.log"; echo "FAIL: e2fsck after restart"; exit 1; }
mount "$loop" "$dir/mnt" || { echo "FAIL: mount after restart"; exit 1; }
if [[ " $* " == *"serve.store=metadata-only"* ]]; then
  # File data reads back as zeros by design; the file system itself must be intact.
  n=$(find "$dir/mnt" -type f | wc -l)
  [ "$n" = 216 ] || { echo "FAIL: $n files after restart, expected 216"; exit 1; }
  echo "OK: metadata-only: ext4 mkfs, mount, 216 files, e2fsck clean, restart, e2fsck clean, 216 files listed"
  exit 0
fi
after=$(cd "$dir/mnt" && find . -type f -print0 | sort -z | xargs -0 sha1sum | sha1sum)
[ "$before" = "$after" ] || { echo "FAIL: files differ after restart"; exit 1; }
echo "OK: ext4 on /dev/loop over nbdfuse over nandlab serve: mkfs, mount, 216 files, e2fsck clean, restart, files intact"
