"""Converts an `.mqsim` write trace (ts_ns devno start_sector nsectors type) to the page
numbers bounds.c reads: little-endian u32, one per 4 KiB write.

    python3 tobin.py TRACE.mqsim TRACE.bin
"""
import array
import sys


def main() -> None:
    src, dst = sys.argv[1], sys.argv[2]
    pages = array.array("I")
    with open(src) as f:
        for line in f:
            pages.append(int(line.split()[2]) // 8)
    if sys.byteorder != "little":
        pages.byteswap()
    with open(dst, "wb") as out:
        pages.tofile(out)


if __name__ == "__main__":
    main()
