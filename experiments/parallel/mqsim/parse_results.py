#!/usr/bin/env python3
"""Summarise one MQSim run of the side-by-side benchmark (Python stdlib only).

Inputs: MQSim's results XML (<workload>_scenario_1.xml), its stdout, the output of
`/usr/bin/time -v`, the SSD configuration XML that was used and the trace that was replayed.
Prints one line per figure.

Where each figure comes from:
- issued requests and host page writes: the trace (every line is one request; size in
  512-byte sectors, rounded up to whole flash pages);
- completed requests: the "total requests serviced" count MQSim prints on stdout (the results
  XML only has the generated count); lost = issued - completed;
- flash page programs: Issued_Flash_Program_CMD
  + planes_per_die * Issued_Flash_Multiplane_Program_CMD from the FTL element. A multi-plane
  command programs one page in each plane of the die, which is exact for 1 or 2 planes per
  die. This counts host programs and GC copies, plus any mapping-table programs (an ideal
  mapping table makes none);
- GC copies: Total_GC_Executions * Average_Page_Movement_For_GC (an average printed with six
  decimals, so rounded to the nearest page);
- erases: Issued_Flash_Erase_CMD + planes_per_die * Issued_Flash_Multiplane_Erase_CMD;
- WA: flash page programs / host page writes completed (also shown per host page issued);
- latency: Device_Response_Time of the IO flow (microseconds, mean over completed requests,
  truncated to an integer by MQSim); every request is a write;
- simulated seconds: Request_Count / IOPS of the IO flow; MQSim computes IOPS with its final
  clock divided by 10^9 in integer arithmetic, so this is whole seconds, rounded down.
"""

import argparse
import re
import sys
import xml.etree.ElementTree as ET

SECTOR = 512


def fail(msg: str) -> None:
    print(f"parse_results.py: {msg}", file=sys.stderr)
    sys.exit(1)


def config_value(cfg: ET.Element, name: str) -> int:
    node = cfg.find(f".//{name}")
    if node is None or node.text is None:
        fail(f"{name} not found in the SSD configuration")
    return int(float(node.text.strip()))


def parse_time_v(path: str) -> tuple[float, int]:
    wall = rss_kib = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("Elapsed (wall clock) time"):
                value = line.rsplit(": ", 1)[1]
                seconds = 0.0
                for part in value.split(":"):
                    seconds = seconds * 60 + float(part)
                wall = seconds
            elif line.startswith("Maximum resident set size (kbytes)"):
                rss_kib = int(line.rsplit(": ", 1)[1])
    if wall is None or rss_kib is None:
        fail(f"no wall time or peak RSS in {path} (is it /usr/bin/time -v output?)")
    return wall, rss_kib


def parse_trace(path: str, page_sectors: int) -> tuple[int, int]:
    requests = pages = 0
    with open(path, encoding="ascii") as f:
        for line in f:
            cols = line.split()
            if len(cols) != 5:
                break  # MQSim stops reading a trace at the first malformed line too
            requests += 1
            start, size = int(cols[2]), int(cols[3])
            first, last = start // page_sectors, (start + size - 1) // page_sectors
            pages += last - first + 1
    return requests, pages


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True,
                    help="MQSim results XML (<workload>_scenario_1.xml)")
    ap.add_argument("--stdout", required=True, help="MQSim's captured stdout")
    ap.add_argument("--time", required=True, help="output of /usr/bin/time -v")
    ap.add_argument("--config", required=True, help="the SSD configuration XML used")
    ap.add_argument("--trace", required=True, help="the ASCII trace replayed")
    args = ap.parse_args()

    cfg = ET.parse(args.config).getroot()
    page_bytes = config_value(cfg, "Page_Capacity")
    planes_per_die = config_value(cfg, "Plane_No_Per_Die")
    page_sectors = page_bytes // SECTOR

    root = ET.parse(args.results).getroot()
    flows = root.findall("./Host/Host.IO_Flow")
    if len(flows) != 1:
        fail(f"expected one IO flow in {args.results}, found {len(flows)}")
    flow = {child.tag: (child.text or "").strip() for child in flows[0]}
    ftl_node = root.find("./SSDDevice/SSDDevice.FTL")
    if ftl_node is None:
        fail(f"no SSDDevice.FTL element in {args.results}")
    ftl = ftl_node.attrib

    def ftl_int(key: str) -> int:
        return int(ftl[key])

    with open(args.stdout, encoding="utf-8", errors="replace") as f:
        m = re.search(r"total requests generated: (\d+) total requests serviced:\s*(\d+)", f.read())
    if not m:
        fail(f"no 'total requests serviced' line in {args.stdout}")
    generated, completed = int(m.group(1)), int(m.group(2))

    wall, rss_kib = parse_time_v(args.time)
    issued, issued_pages = parse_trace(args.trace, page_sectors)
    if generated != issued:
        print(f"warning: MQSim generated {generated} requests, the trace has {issued}",
              file=sys.stderr)
    completed_pages = round(float(flow["Bytes_Transferred_Write"]) / page_bytes)

    def pages(single: str, multi: str) -> int:
        # A multi-plane command acts on one page (or block) in each plane of the die.
        return ftl_int(single) + planes_per_die * ftl_int(multi)

    programs = pages("Issued_Flash_Program_CMD", "Issued_Flash_Multiplane_Program_CMD")
    copyback = pages("Issued_Flash_Copyback_Program_CMD",
                     "Issued_Flash_Multiplane_Copyback_Program_CMD")
    erases = pages("Issued_Flash_Erase_CMD", "Issued_Flash_Multiplane_Erase_CMD")
    gc_runs = ftl_int("Total_GC_Executions")
    gc_avg = float(ftl["Average_Page_Movement_For_GC"]) if gc_runs else 0.0
    gc_copies = round(gc_runs * gc_avg)
    wl_runs = ftl_int("Total_WL_Executions")
    mapping_programs = ftl_int("Issued_Flash_Program_CMD_For_Mapping")
    iops = float(flow["IOPS"])
    sim_seconds = int(flow["Request_Count"]) / iops if iops > 0 else 0.0

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.3f}" if b else "n/a"

    lost = issued - completed
    host_programs = programs - gc_copies - mapping_programs
    wa_done = ratio(programs + copyback, completed_pages)
    wa_issued = ratio(programs + copyback, issued_pages)
    rows = [
        ("requests issued", f"{issued}"),
        ("requests completed", f"{completed}"),
        ("requests lost",
         f"{lost} ({100.0 * lost / issued:.3f} % of issued)" if issued else "n/a"),
        ("wall seconds", f"{wall:.2f}"),
        ("requests per wall second", f"{issued / wall:.0f}" if wall else "n/a"),
        ("peak RSS", f"{rss_kib / 1024:.1f} MiB ({rss_kib} KiB)"),
        ("simulated seconds",
         f"{sim_seconds:.0f} (whole seconds: MQSim divides its clock by 10^9 in integers)"),
        ("flash page programs",
         f"{programs} (host {host_programs}, GC copies {gc_copies}, "
         f"mapping {mapping_programs}; copyback {copyback})"),
        ("write amplification",
         f"{wa_done} (programs / {completed_pages} host page writes completed; "
         f"{wa_issued} per host page issued)"),
        ("block erases", f"{erases} (GC executions {gc_runs}, wear-leveling executions {wl_runs})"),
        ("mean write latency",
         f"{flow['Device_Response_Time']} us (device response time; "
         f"end-to-end {flow['End_to_End_Request_Delay']} us, "
         f"max {flow['Max_Device_Response_Time']} us)"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
