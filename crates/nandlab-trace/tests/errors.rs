//! Malformed input gives typed errors naming the file and line; no panics.

mod common;

use common::{gzip, srt_file, write_tmp};
use nandlab_trace::{detect_format, open, scan, TraceError, TraceFormat, TraceOptions};

fn with_format(f: TraceFormat) -> TraceOptions {
    TraceOptions { format: Some(f), device: None }
}

/// Reads until the first error; returns (records before it, the error).
fn first_error(path: &std::path::Path, options: &TraceOptions) -> (usize, TraceError) {
    let mut reader = open(path, options).unwrap();
    let mut ok = 0;
    for item in reader.by_ref() {
        match item {
            Ok(_) => ok += 1,
            Err(e) => {
                // The reader stops after an error.
                assert!(reader.next().is_none());
                return (ok, e);
            }
        }
    }
    panic!("no error in {}", path.display());
}

fn parse_error(e: &TraceError) -> (u64, &str) {
    match e {
        TraceError::Parse { line, message, .. } => (*line, message.as_str()),
        other => panic!("expected a Parse error, got {other:?}"),
    }
}

#[test]
fn wrong_field_count_display() {
    let mut text = String::new();
    for _ in 0..16 {
        text.push_str("128166385295514663,hm,0,Write,9056014336,2048,2833\n");
    }
    text.push_str("128166385295514663,hm,0\n");
    let p = write_tmp("err-fields.csv", text.as_bytes());
    let (ok, e) = first_error(&p, &TraceOptions::default());
    assert_eq!(ok, 16);
    assert_eq!(parse_error(&e).0, 17);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:17: expected 7 comma-separated fields, found 3: \"128166385295514663,hm,0\"",
            p.display()
        )
    );
}

#[test]
fn bad_number_names_field_and_line() {
    let p = write_tmp(
        "err-number.csv",
        b"1,hm,0,Write,4096,512,1\n# comment\n\n2,hm,0,Read,12x4,512,1\n",
    );
    let (ok, e) = first_error(&p, &TraceOptions::default());
    assert_eq!(ok, 1);
    let (line, msg) = parse_error(&e);
    assert_eq!(line, 4);
    assert!(
        msg.starts_with("field 5 (Offset): expected a non-negative integer, found \"12x4\""),
        "{msg}"
    );
    assert!(e.to_string().starts_with(&format!("{}:4: ", p.display())));
}

#[test]
fn bad_op_in_each_format() {
    let cases: &[(TraceFormat, &str, &str)] = &[
        (TraceFormat::Msr, "1,hm,0,Erase,0,512,1", "field 4 (Type)"),
        (TraceFormat::Spc, "0,1,512,x,0.1", "field 4 (Opcode)"),
        (TraceFormat::Disksim, "1.0 0 1 8 w", "field 5 (flags)"),
        (TraceFormat::Mqsim, "100 0 1 8 7", "field 5 (type)"),
        (TraceFormat::Blkparse, "8,0 0 1 0.1 0 C  1 + 8 [0]", "field 7 (RWBS)"),
        (TraceFormat::Tencent, "1,0,8,2,5", "field 4 (IOType)"),
        (TraceFormat::Systor, "1.0,0.1,T,0,0,512", "field 3 (IOType)"),
        (TraceFormat::Cloudphysics, "1,5,c1,512,0", "unsupported SCSI opcode 0xc1"),
        (TraceFormat::Alibaba, "7,D,0,4096,5", "field 2 (opcode)"),
    ];
    for (format, bad, expect) in cases {
        let content = format!("\n{bad}\n");
        let p = write_tmp(&format!("err-op-{}.txt", format.name()), content.as_bytes());
        let (ok, e) = first_error(&p, &with_format(*format));
        assert_eq!(ok, 0, "{format}");
        let (line, msg) = parse_error(&e);
        assert_eq!(line, 2, "{format}");
        assert!(msg.contains(expect), "{format}: {msg}");
        assert!(msg.contains(&format!("\"{bad}\"")) || *format == TraceFormat::Blkparse, "{msg}");
    }
}

#[test]
fn long_line_is_quoted_truncated() {
    let long = format!("1,hm,0,Read,0,512,{}", "9".repeat(200));
    let p = write_tmp("err-long.csv", long.as_bytes());
    let (_, e) = first_error(&p, &with_format(TraceFormat::Msr));
    let msg = e.to_string();
    let quoted = msg.split('"').nth(3).unwrap(); // after the field's own quote
    assert_eq!(quoted.chars().count(), 81, "{msg}");
    assert!(quoted.ends_with('…'));
}

#[test]
fn overflowing_values_are_errors() {
    // 2^64 / 512 sectors overflow the byte address.
    let p = write_tmp("err-overflow.csv", b"1,36028797018963968,8,0,1\n");
    let (_, e) = first_error(&p, &with_format(TraceFormat::Tencent));
    assert!(parse_error(&e).1.contains("overflow"), "{e}");
    let p = write_tmp("err-overflow2.csv", b"1,hm,0,Read,18446744073709551615,512,1\n");
    let (_, e) = first_error(&p, &with_format(TraceFormat::Msr));
    assert!(parse_error(&e).1.contains("overflows"), "{e}");
    let p = write_tmp("err-overflow3.csv", b"1,hm,0,Read,18446744073709551616,512,1\n");
    let (_, e) = first_error(&p, &with_format(TraceFormat::Msr));
    assert!(parse_error(&e).1.contains("field 5 (Offset)"), "{e}");
}

#[test]
fn truncated_gzip_is_an_error_not_a_panic() {
    let mut text = String::new();
    for i in 0..20_000u64 {
        text.push_str(&format!("{} {} {} 8 {}\n", 1000 + i * 37, i % 4, i * 8 + 13, i % 2));
    }
    let gz = gzip(text.as_bytes());
    for cut in [gz.len() / 2, gz.len() - 4, 12] {
        let p = write_tmp("err-truncated.gz", &gz[..cut]);
        let (ok, e) = first_error(&p, &with_format(TraceFormat::Mqsim));
        assert!(ok <= 20_000);
        match &e {
            TraceError::Io { message, .. } => assert!(message.contains("gzip"), "{message}"),
            TraceError::Parse { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
        // Detection and scan fail cleanly too.
        let _ = detect_format(&p);
        assert!(scan(&p, &TraceOptions::default()).is_err());
    }
    // Garbage after a gzip magic.
    let p = write_tmp("err-garbage.gz", b"\x1f\x8b\x08\x00garbage garbage garbage");
    assert!(matches!(open(&p, &TraceOptions::default()), Err(TraceError::Io { .. })));
    assert!(matches!(first_error(&p, &with_format(TraceFormat::Msr)).1, TraceError::Io { .. }));
}

#[test]
fn missing_empty_unknown_and_binary_files() {
    let missing = std::path::Path::new("/nonexistent/trace.csv");
    let e = open(missing, &TraceOptions::default()).unwrap_err();
    assert!(matches!(e, TraceError::Io { .. }));
    assert!(e.to_string().starts_with("/nonexistent/trace.csv: cannot open"), "{e}");

    let empty = write_tmp("err-empty.csv", b"");
    assert!(matches!(detect_format(&empty), Err(TraceError::Empty { .. })));
    let comments = write_tmp("err-comments.csv", b"# nothing\n\n   \n");
    assert!(matches!(detect_format(&comments), Err(TraceError::Empty { .. })));
    assert!(matches!(
        scan(&comments, &with_format(TraceFormat::Msr)),
        Err(TraceError::Empty { .. })
    ));

    let unknown =
        write_tmp("err-unknown.txt", b"1 0 write 36 4\n5 18778141 pwrite 77 643072 4096\n");
    let e = detect_format(&unknown).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, TraceError::UnknownFormat { .. }));
    for f in TraceFormat::ALL {
        assert!(msg.contains(&format!("{}:", f.name())), "{msg}");
    }
    assert!(msg.contains("set workload.format"), "{msg}");

    let mut binary = vec![0u8; 3 << 20];
    binary[0] = 0xff;
    let p = write_tmp("err-binary.bin", &binary);
    let e = detect_format(&p).unwrap_err();
    assert!(e.to_string().contains("longer than"), "{e}");
    let (_, e) = first_error(&p, &with_format(TraceFormat::Disksim));
    assert_eq!(parse_error(&e).0, 1);

    let invalid_utf8 = write_tmp("err-utf8.csv", b"1,h\xff\xfe,0,Bad,0,512,1\n");
    let (_, e) = first_error(&invalid_utf8, &with_format(TraceFormat::Msr));
    assert!(e.to_string().contains('\u{fffd}'), "{e}");
}

#[test]
fn blkparse_bad_completion_line_number() {
    let p = write_tmp(
        "err-blkparse.txt",
        b"  8,0    3        1     0.000000000   697  Q   W 1 + 8 [dd]\n  8,0    1        2     0.000401733     0  C   W 223490 + x [0]\n",
    );
    assert_eq!(detect_format(&p).unwrap_or(TraceFormat::Blkparse), TraceFormat::Blkparse);
    let (ok, e) = first_error(&p, &with_format(TraceFormat::Blkparse));
    assert_eq!(ok, 0);
    let (line, msg) = parse_error(&e);
    assert_eq!(line, 2);
    assert!(msg.contains("field 10 (sector count)"), "{msg}");
}

#[test]
fn alibaba_malformed_line_names_file_line_and_field() {
    let p = write_tmp("err-alibaba.csv", b"3,W,0,4096,10\n3,W,4096,4096,11\n3,W,8192,4k,12\n");
    let (ok, e) = first_error(&p, &with_format(TraceFormat::Alibaba));
    assert_eq!(ok, 2);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3: field 4 (length (bytes)): expected a non-negative integer, found \"4k\": \
             \"3,W,8192,4k,12\"",
            p.display()
        )
    );
    let p = write_tmp("err-alibaba-fields.csv", b"3,W,0,4096,10,extra\n");
    let (_, e) = first_error(&p, &with_format(TraceFormat::Alibaba));
    assert_eq!(
        parse_error(&e),
        (1, "expected 5 comma-separated fields, found 6: \"3,W,0,4096,10,extra\"")
    );
}

/// A version 3 short I/O write of 4096 bytes at sector `sector`.
fn srt_write(sector: u32) -> Vec<u32> {
    vec![52, 3 << 16 | 1, 50, 0, 1, 2, 4096, sector, 7, 0, 0, 0, 0]
}

#[test]
fn srt_bad_records_name_file_record_and_byte() {
    let header = "$$TR_IOREC-1.3\n";
    let at = |record: usize| header.len() + 1 + 52 * record;
    let srt = TraceFormat::Srt;
    // An unknown version (the "shortIO_v7" files): refused, not guessed.
    let mut v7 = srt_write(2);
    v7[1] = 7 << 16 | 1;
    let p = write_tmp("err-srt-version.srt", &srt_file(header, &[srt_write(1), v7]));
    let (ok, e) = first_error(&p, &with_format(srt));
    assert_eq!(ok, 1);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2: SRT record 2 at byte {}: record version 7 (id 0x00070001); the layout known \
             (DiskSim's) is that of versions 1 to 4",
            p.display(),
            at(1)
        )
    );
    // A size that does not match the version, an unknown type, a length in part sectors.
    let mut wrong_size = srt_write(2);
    wrong_size[0] = 88;
    let mut text_record = srt_write(2);
    text_record[1] = 3 << 16 | 3;
    let mut odd = srt_write(2);
    odd[6] = 1000;
    for (name, bad, expect) in [
        ("size", wrong_size, "size field 88; a version 3 type 1 record is 52 bytes"),
        ("type", text_record, "record type 3; expected 1 (short I/O) or 4 (suspect I/O)"),
        ("length", odd, "length 1000 bytes is not a multiple of 512"),
    ] {
        let p = write_tmp(&format!("err-srt-{name}.srt"), &srt_file(header, &[srt_write(1), bad]));
        let (ok, e) = first_error(&p, &with_format(srt));
        assert_eq!((ok, parse_error(&e).0), (1, 2), "{name}");
        assert!(parse_error(&e).1.contains(expect), "{name}: {e}");
    }
    // A record cut short by the end of the file.
    let mut cut = srt_file(header, &[srt_write(1), srt_write(2)]);
    cut.truncate(cut.len() - 10);
    let p = write_tmp("err-srt-cut.srt", &cut);
    let (ok, e) = first_error(&p, &with_format(srt));
    assert_eq!(ok, 1);
    assert!(parse_error(&e).1.contains("truncated: 42 of its 52 bytes"), "{e}");
    // Not an SRT file, or a header without its form feed.
    let p = write_tmp("err-srt-text.srt", b"1,hm,0,Write,0,512,1\n");
    let e = open(&p, &with_format(srt)).unwrap_err();
    assert!(matches!(e, TraceError::UnknownFormat { .. }));
    assert!(e.to_string().contains("does not begin with \"$$TR_IOREC\""), "{e}");
    let p = write_tmp("err-srt-header.srt", b"$$TR_IOREC-1.3\nversion = 1.3;\n");
    let e = open(&p, &with_format(srt)).unwrap_err();
    assert!(e.to_string().contains("no form feed (0x0C) ends the text header"), "{e}");
}
