//! Each format parsed from a tiny hand-written fixture to exact records.

mod common;

use common::{fixture, gzip, read_all, srt_file, write_tmp};
use nandlab_trace::{detect_format, open, scan, TraceFormat, TraceOp, TraceOptions, TraceRecord};

fn r(op: TraceOp, offset: u64, length: u64, time_ns: u64, device: u64, line: u64) -> TraceRecord {
    TraceRecord { op, offset_bytes: offset, length_bytes: length, time_ns, device, line }
}

fn detected() -> TraceOptions {
    TraceOptions::default()
}

fn only_device(d: u64) -> TraceOptions {
    TraceOptions { format: None, device: Some(d) }
}

const MSR: &str = "\
128166385295514663,hm,0,Write,9056014336,2048,2833
128166385295514878,hm,1,Read,11855351808,512,2617
# a comment

128166385295514000,hm,0,write,4096,4096,10
128166385295515175,hm,0,Read,0,0,1
128166385295515200,hm,0,READ,8192,4096,5
";

#[test]
fn msr_exact_records() {
    let p = write_tmp("fmt-msr.csv", MSR.as_bytes());
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Msr);
    use TraceOp::*;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Write, 9_056_014_336, 2048, 0, 0, 1),
            r(Read, 11_855_351_808, 512, 21_500, 1, 2),
            // the clock went backwards: clamped to the previous time
            r(Write, 4096, 4096, 21_500, 0, 5),
            // line 6 has size 0: skipped
            r(Read, 8192, 4096, 53_700, 0, 7),
        ]
    );
    // Device selection: only disk 1, whose first record gets time 0.
    assert_eq!(read_all(&p, &only_device(1)), vec![r(Read, 11_855_351_808, 512, 0, 1, 2)]);
    assert_eq!(read_all(&p, &only_device(0)).len(), 3);
}

#[test]
fn spc_exact_records() {
    let p = fixture("spc-sample.csv");
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Spc);
    use TraceOp::*;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Write, 20_941_264 * 512, 8192, 0, 0, 1),
            r(Read, 20_939_840 * 512, 8192, 2_335_000, 1, 2),
            r(Write, 0, 512, 448_294_001, 2, 4),
        ]
    );
}

#[test]
fn disksim_exact_records() {
    let p = write_tmp(
        "fmt-disksim.trace",
        b"5265.313 0 6357144 8 0\n5265.703 1 6307768 16 1\n5266 0 1 8 3\n",
    );
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Disksim);
    use TraceOp::*;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Write, 6_357_144 * 512, 4096, 0, 0, 1),
            r(Read, 6_307_768 * 512, 8192, 390_000, 1, 2),
            r(Read, 512, 4096, 687_000, 0, 3),
        ]
    );
}

#[test]
fn mqsim_exact_records() {
    let p = write_tmp(
        "fmt-mqsim.trace",
        b"938513000 4 264719034 16 0\n938828000 3 197570570 16 1\n938000000 13 93230992 32 0",
    );
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Mqsim);
    use TraceOp::*;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Write, 264_719_034 * 512, 8192, 0, 4, 1),
            r(Read, 197_570_570 * 512, 8192, 315_000, 3, 2),
            // earlier than the previous record: clamped; no final newline
            r(Write, 93_230_992 * 512, 16_384, 315_000, 13, 3),
        ]
    );
    // The same lines read as DiskSim (explicit format): times are ms.
    let as_disksim =
        read_all(&p, &TraceOptions { format: Some(TraceFormat::Disksim), device: None });
    assert_eq!(as_disksim[1].time_ns, 315_000 * 1_000_000);
}

#[test]
fn blkparse_exact_records() {
    let p = fixture("blkparse-sample.txt");
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Blkparse);
    use TraceOp::*;
    let sda = 8 << 20;
    let sdb = 8 << 20 | 16;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Write, 223_490 * 512, 4096, 0, sda, 8),
            r(Read, 512_000, 8192, 798_267, sdb, 10),
            r(Trim, 4096 * 512, 2048 * 512, 1_598_267, sda, 11),
            r(Flush, 0, 0, 2_098_267, sda, 12),
            r(Flush, 0, 0, 2_598_267, sda, 13),
            r(Write, 256_000, 4096, 3_098_267, sda, 14),
        ]
    );
    assert_eq!(read_all(&p, &only_device(sdb)), vec![r(Read, 512_000, 8192, 0, sdb, 10)]);
    let s = scan(&p, &detected()).unwrap();
    assert_eq!((s.records, s.reads, s.writes, s.trims, s.flushes), (6, 1, 2, 1, 2));
    assert_eq!(s.bytes_trimmed, 1_048_576);
    assert_eq!(s.devices, vec![sda, sdb]);
}

#[test]
fn tencent_exact_records() {
    let p = write_tmp(
        "fmt-tencent.csv.gz",
        &gzip(b"1538323200,4247200,128,1,1058\n1538323199,13896880,128,0,1063\n1538323201,49413280,16,0,1063\n"),
    );
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Tencent);
    use TraceOp::*;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Write, 4_247_200 * 512, 65_536, 0, 1058, 1),
            r(Read, 13_896_880 * 512, 65_536, 0, 1063, 2),
            r(Read, 49_413_280 * 512, 8192, 1_000_000_000, 1063, 3),
        ]
    );
    assert_eq!(
        read_all(&p, &only_device(1063)),
        vec![
            r(Read, 13_896_880 * 512, 65_536, 0, 1063, 2),
            r(Read, 49_413_280 * 512, 8192, 2_000_000_000, 1063, 3),
        ]
    );
}

#[test]
fn systor_exact_records() {
    let p = write_tmp(
        "fmt-systor.csv",
        b"Timestamp,Response,IOType,LUN,Offset,Size\n\
1456095145.133076000,0.000806000,R,0,899056122368,131072\n\
1456095145.126285000,0.008044000,R,0,4256049987072,122880\n\
1456095147.572965123,0.000236000,W,1,3773561050624,7680\n",
    );
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Systor);
    use TraceOp::*;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Read, 899_056_122_368, 131_072, 0, 0, 2),
            r(Read, 4_256_049_987_072, 122_880, 0, 0, 3),
            r(Write, 3_773_561_050_624, 7680, 2_439_889_123, 1, 4),
        ]
    );
}

#[test]
fn cloudphysics_exact_records() {
    let p = write_tmp(
        "fmt-cloudphysics.csv",
        b"version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633900,28,4096,8\n1,5633910,35,0,0\n1,5633920,42,8192,16\n",
    );
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Cloudphysics);
    use TraceOp::*;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Write, 42_932_745 * 512, 512, 0, 0, 2),
            r(Read, 4096, 4096, 2000, 0, 3),
            r(Flush, 0, 0, 12_000, 0, 4),
            r(Trim, 8192, 8192, 22_000, 0, 5),
        ]
    );
}

#[test]
fn alibaba_exact_records_and_one_volume() {
    // Two volumes interleaved, as the release stores them; times in microseconds.
    let p = write_tmp(
        "fmt-alibaba.csv",
        b"419,W,7471104,4096,1577808000000009\n\
          7,R,0,8192,1577808000000010\n\
          419,r,8192,512,1577808000000250\n\
          419,W,4096,0,1577808000000300\n",
    );
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Alibaba);
    use TraceOp::*;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Write, 7_471_104, 4096, 0, 419, 1),
            r(Read, 0, 8192, 1000, 7, 2),
            r(Read, 8192, 512, 241_000, 419, 3),
        ]
    );
    // One volume: its first request is time 0; the zero-length write is skipped.
    assert_eq!(
        read_all(&p, &only_device(419)),
        vec![r(Write, 7_471_104, 4096, 0, 419, 1), r(Read, 8192, 512, 241_000, 419, 3)]
    );
}

/// A short I/O record of SRT `version` (1 to 4): issued at `sec`.`usec`, `bytes` at `sector` of
/// `devno`, a read when `read`.
fn srt_short_io(
    version: u32,
    time: (u32, u32),
    bytes: u32,
    sector: u32,
    devno: u32,
    read: bool,
) -> Vec<u32> {
    let size = if version == 4 { 56 } else { 52 };
    let flags = if read { 0x0020_4001 } else { 0x0020_4000 };
    let mut r =
        vec![size, version << 16 | 1, time.0, time.1, 3, 700, bytes, sector, devno, 0, 0, flags, 0];
    if version == 4 {
        r.push(2);
    }
    r
}

#[test]
fn srt_exact_records() {
    // Version 3 and 4 short I/O records, a suspect I/O record (skipped, as DiskSim does), two
    // devices; gzip like the other formats.
    let mut suspect = srt_short_io(4, (100, 999_999), 1024, 9, 0x1f01_6000, true);
    suspect[0] = 60;
    suspect[1] = 4 << 16 | 4;
    suspect.push(1);
    let records = [
        srt_short_io(3, (100, 500_000), 8192, 1000, 0x1f01_6000, false),
        srt_short_io(4, (100, 500_250), 4096, 24, 0x1f02_6000, true),
        suspect,
        srt_short_io(4, (101, 0), 512, 7, 0x1f01_6000, false),
    ];
    let content = srt_file("$$TR_IOREC-1.4 : a hand-made sample\nversion = 1.4;\n", &records);
    let p = write_tmp("fmt-srt.srt.gz", &gzip(&content));
    assert_eq!(detect_format(&p).unwrap(), TraceFormat::Srt);
    use TraceOp::*;
    assert_eq!(
        read_all(&p, &detected()),
        vec![
            r(Write, 1000 * 512, 8192, 0, 0x1f01_6000, 1),
            r(Read, 24 * 512, 4096, 250_000, 0x1f02_6000, 2),
            r(Write, 7 * 512, 512, 500_000_000, 0x1f01_6000, 4),
        ]
    );
    assert_eq!(
        read_all(&p, &only_device(0x1f02_6000)),
        vec![r(Read, 24 * 512, 4096, 0, 0x1f02_6000, 2)]
    );
}

#[test]
fn format_names_round_trip() {
    for f in TraceFormat::ALL {
        assert_eq!(TraceFormat::from_name(f.name()), Some(f));
        assert_eq!(TraceFormat::from_name(&f.name().to_uppercase()), Some(f));
        assert_eq!(f.to_string(), f.name());
    }
    assert_eq!(TraceFormat::from_name("csv"), None);
    let names: Vec<_> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(
        names,
        [
            "msr",
            "spc",
            "disksim",
            "mqsim",
            "blkparse",
            "tencent",
            "systor",
            "cloudphysics",
            "alibaba",
            "srt"
        ]
    );
}

#[test]
fn explicit_format_overrides_detection_and_header_is_skipped() {
    // BOM + header + CRLF line endings + a repeated header in the middle.
    let p = write_tmp(
        "fmt-systor-crlf.csv",
        b"\xEF\xBB\xBFTimestamp,Response,IOType,LUN,Offset,Size\r\n1.5,0.1,W,3,4096,4096\r\nTimestamp,Response,IOType,LUN,Offset,Size\r\n2.5,,R,3,0,512\r\n",
    );
    let reader =
        open(&p, &TraceOptions { format: Some(TraceFormat::Systor), device: None }).unwrap();
    assert_eq!(reader.format(), TraceFormat::Systor);
    let recs: Vec<_> = reader.map(Result::unwrap).collect();
    assert_eq!(
        recs,
        vec![r(TraceOp::Write, 4096, 4096, 0, 3, 2), r(TraceOp::Read, 0, 512, 1_000_000_000, 3, 4),]
    );
}

#[test]
fn gzip_is_detected_by_magic_not_name() {
    let plain = write_tmp("fmt-gz-named.gz", b"938513000 4 1 16 0\n");
    assert_eq!(read_all(&plain, &detected()).len(), 1);
    let gz = write_tmp("fmt-gz-unnamed.txt", &gzip(b"938513000 4 1 16 0\n938513001 4 1 16 1\n"));
    assert_eq!(read_all(&gz, &detected()).len(), 2);
    // Two concatenated gzip members read as one stream.
    let mut two = gzip(b"938513000 4 1 16 0\n");
    two.extend(gzip(b"938513001 4 1 16 1\n"));
    let p = write_tmp("fmt-gz-multi.gz", &two);
    assert_eq!(read_all(&p, &detected()).len(), 2);
}

/// Goal: lines are found in place in the reader's 1 MiB read window: every line of a file
/// several windows long is read exactly once, with its own values and line number, whether it
/// ends in a window or straddles two, and whatever its length (a 700 KiB comment line included),
/// gzipped or not, with or without a final newline.
#[test]
fn lines_across_read_windows() {
    let mut text = Vec::new();
    let mut expected = Vec::new();
    let mut line = 0u64;
    let mut rng = 12345u64;
    for i in 0..400_000u64 {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // Lines of varying widths, so window ends fall at every position of a line.
        let pad = " ".repeat((rng >> 60) as usize);
        text.extend_from_slice(
            format!("{}{pad} 0 {} 8 0\n", 1000 * (i + 1), (rng >> 33) * 8).as_bytes(),
        );
        line += 1;
        expected.push(((rng >> 33) * 8 * 512, line));
        if i == 200_000 {
            text.extend_from_slice(b"#");
            text.extend_from_slice(&vec![b'x'; 700 << 10]);
            text.extend_from_slice(b"\n");
            line += 1;
        }
    }
    text.pop(); // no final newline
    for (name, bytes) in [("windows.mqsim", text.clone()), ("windows.mqsim.gz", gzip(&text))] {
        let p = write_tmp(name, &bytes);
        let options = TraceOptions { format: Some(TraceFormat::Mqsim), device: None };
        let got: Vec<(u64, u64)> = open(&p, &options)
            .unwrap()
            .map(|r| r.map(|r| (r.offset_bytes, r.line)).unwrap())
            .collect();
        assert_eq!(got.len(), expected.len(), "{name}");
        assert!(got == expected, "{name}: records differ");
    }
}

/// Goal: a trace read on a second thread (`BackgroundReader`) yields exactly the reader's
/// records, then its first error at the same place, and dropping it half way stops its thread.
#[test]
fn background_reader_yields_the_same_stream() {
    let mut text = String::new();
    for i in 0..10_000u64 {
        text += &format!("{} 0 {} 8 {}\n", 1000 * i, i * 8, i % 2);
    }
    let good = write_tmp("background.mqsim", text.as_bytes());
    text += "5 0 8 8 7\n";
    text += "6 0 8 8 0\n";
    let bad = write_tmp("background-bad.mqsim", text.as_bytes());
    let options = TraceOptions { format: Some(TraceFormat::Mqsim), device: None };
    for p in [&good, &bad] {
        let direct: Vec<String> = open(p, &options).unwrap().map(|r| format!("{r:?}")).collect();
        let background: Vec<String> =
            nandlab_trace::BackgroundReader::new(open(p, &options).unwrap())
                .map(|r| format!("{r:?}"))
                .collect();
        assert_eq!(direct, background);
    }
    let errors = nandlab_trace::BackgroundReader::new(open(&bad, &options).unwrap())
        .filter(Result::is_err)
        .count();
    assert_eq!(errors, 1, "the stream ends at its first error");
    let mut early = nandlab_trace::BackgroundReader::new(open(&good, &options).unwrap());
    assert!(early.next().unwrap().is_ok());
    drop(early);
}
