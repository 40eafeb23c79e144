//! Closed forms of the sim-engine on tiny hardware, exact to the nanosecond.
//! Method: drive the engine directly (requests of hand-placed operations) with round numbers
//! — command c = 1 µs, read R = 25 µs, transfer x = 10 µs, program P = 200 µs, erase
//! E = 1.5 ms — and compare every completion with the formula worked out in its comment.

use super::scheduler::{fifo::Fifo, read_priority::ReadPriority, SchedulerSpec};
use super::*;

const C: u64 = 1_000;
const R: u64 = 25_000;
const X: u64 = 10_000;
const P: u64 = 200_000;
const E: u64 = 1_500_000;

fn timing() -> Timing {
    Timing {
        read_page_ns: R,
        program_page_ns: P,
        erase_block_ns: E,
        transfer_page_ns: X,
        copy_page_ns: None,
        ram_page_ns: 0,
        command_ns: C,
    }
}

fn hw(gangs: u32, chips: u32, dies: u32, planes: u32) -> Hardware {
    Hardware {
        gangs,
        channels_per_gang: 1,
        chips_per_channel: chips,
        dies_per_chip: dies,
        planes_per_die: planes,
    }
}

fn engine(h: Hardware, s: &dyn SchedulerSpec) -> Engine {
    Engine::new(h, &timing(), s)
}

/// One request of `ops` (kind, plane, page) arriving at `at`.
fn request(e: &mut Engine, class: Class, at: u64, ops: &[(OpKind, u32, u32)]) -> Outcome {
    e.begin(class, at);
    for &(kind, plane, page) in ops {
        e.op(kind, plane, page, OpRef::Done(0));
    }
    e.end()
}

fn end_of(o: Outcome) -> u64 {
    match o {
        Outcome::Timed { end_ns, .. } => end_ns,
        Outcome::Queued { .. } => panic!("queued: {o:?}"),
    }
}

#[test]
fn an_isolated_read_is_command_array_transfer() {
    let mut e = engine(hw(1, 1, 1, 1), &Fifo);
    let o = request(&mut e, Class::HostRead, 0, &[(OpKind::Read, 0, 0)]);
    assert_eq!(o, Outcome::Timed { first_start_ns: 0, end_ns: C + R + X });
    // A program: command and data in, then the array.
    let o = request(&mut e, Class::HostWrite, 100_000, &[(OpKind::Program, 0, 0)]);
    assert_eq!(end_of(o), 100_000 + C + X + P);
}

#[test]
fn one_die_serializes_to_the_sum_of_operation_times() {
    let mut e = engine(hw(1, 1, 1, 1), &Fifo);
    let ops = [(OpKind::Read, 0, 0), (OpKind::Program, 0, 1), (OpKind::Erase, 0, 0)];
    let o = request(&mut e, Class::HostWrite, 7, &ops);
    assert_eq!(end_of(o), 7 + (C + R + X) + (C + X + P) + (C + E));
    // A request arriving while the die is busy starts when it is free.
    let o = request(&mut e, Class::HostRead, 10, &[(OpKind::Read, 0, 3)]);
    let busy = 7 + (C + R + X) + (C + X + P) + (C + E);
    assert_eq!(o, Outcome::Timed { first_start_ns: busy, end_ns: busy + C + R + X });
}

#[test]
fn k_reads_on_k_chips_of_one_channel_share_its_bus() {
    // Commands go out back to back (i·c), the arrays work in parallel, the transfers queue on
    // the bus: read k's data goes out at c + R + k·x (x > c, and every command fits before
    // the first transfer), so the last ends at c + R + K·x.
    for k in 1..=4u32 {
        let mut e = engine(hw(1, k, 1, 1), &Fifo);
        let ops: Vec<_> = (0..k).map(|chip| (OpKind::Read, chip, 0)).collect();
        let o = request(&mut e, Class::HostRead, 0, &ops);
        assert_eq!(end_of(o), C + R + u64::from(k) * X, "{k} chips");
        let stats = e.stats();
        assert_eq!(stats.bus_busy_ns, vec![u64::from(k) * (C + X)]);
        // Chip i is busy from its command (i·c) to its transfer's end.
        for (i, &busy) in stats.die_busy_ns.iter().enumerate() {
            let i = i as u64;
            assert_eq!(busy, (C + R + (i + 1) * X) - i * C, "chip {i}");
        }
    }
}

#[test]
fn k_writes_over_one_bus_and_over_k_gangs() {
    // One bus: each program's command and data take c + x of it in turn; the last array
    // starts at K·(c + x).
    let k = 4u32;
    let mut e = engine(hw(1, k, 1, 1), &Fifo);
    let ops: Vec<_> = (0..k).map(|chip| (OpKind::Program, chip, 0)).collect();
    let o = request(&mut e, Class::HostWrite, 0, &ops);
    assert_eq!(end_of(o), u64::from(k) * (C + X) + P);
    // K gangs (independent buses): all in parallel.
    let mut e = engine(hw(k, 1, 1, 1), &Fifo);
    let o = request(&mut e, Class::HostWrite, 0, &ops);
    assert_eq!(end_of(o), C + X + P);
    assert_eq!(e.stats().die_busy_ns, vec![C + X + P; k as usize]);
}

#[test]
fn a_gang_moves_its_channels_lanes_in_lock_step() {
    // Four channels in one gang: one effective page is one operation, its four flash pages
    // moved at once (one transfer time).
    let h = Hardware { channels_per_gang: 4, ..hw(1, 1, 1, 1) };
    let mut e = engine(h, &Fifo);
    let o = request(&mut e, Class::HostWrite, 0, &[(OpKind::Program, 0, 0)]);
    assert_eq!(end_of(o), C + X + P);
}

#[test]
fn a_read_behind_an_erase_on_another_chip_finishes_first() {
    let mut e = engine(hw(1, 2, 1, 1), &Fifo);
    let erase = request(&mut e, Class::HostWrite, 0, &[(OpKind::Erase, 0, 0)]);
    assert_eq!(end_of(erase), C + E);
    // Arrives after the erase's command is out; chip 1 is idle.
    let read = request(&mut e, Class::HostRead, 5_000, &[(OpKind::Read, 1, 0)]);
    assert_eq!(end_of(read), 5_000 + C + R + X);
    assert!(end_of(read) < end_of(erase));
    // A read of chip 0 waits for the erase.
    let read0 = request(&mut e, Class::HostRead, 6_000, &[(OpKind::Read, 0, 0)]);
    assert_eq!(end_of(read0), C + E + C + R + X);
}

#[test]
fn multi_plane_operations_share_command_and_array_time() {
    let mut e = engine(hw(1, 1, 1, 2), &Fifo);
    // Same page offset on both planes: c, both pages' data (2x), one program.
    let o =
        request(&mut e, Class::HostWrite, 0, &[(OpKind::Program, 0, 5), (OpKind::Program, 1, 5)]);
    assert_eq!(end_of(o), C + 2 * X + P);
    // Different offsets: two operations one after the other.
    let t = 1_000_000;
    let o =
        request(&mut e, Class::HostWrite, t, &[(OpKind::Program, 0, 6), (OpKind::Program, 1, 7)]);
    assert_eq!(end_of(o), t + 2 * (C + X + P));
    // Reads: c, one array time, the two pages out one after the other.
    let t = 2_000_000;
    let o = request(&mut e, Class::HostRead, t, &[(OpKind::Read, 0, 1), (OpKind::Read, 1, 1)]);
    assert_eq!(end_of(o), t + C + R + 2 * X);
    // Erases of any blocks of the two planes: one erase time.
    let t = 3_000_000;
    let o = request(&mut e, Class::HostWrite, t, &[(OpKind::Erase, 0, 0), (OpKind::Erase, 1, 0)]);
    assert_eq!(end_of(o), t + C + E);
    // The same plane twice never merges.
    let t = 5_000_000;
    let o =
        request(&mut e, Class::HostWrite, t, &[(OpKind::Program, 0, 8), (OpKind::Program, 0, 9)]);
    assert_eq!(end_of(o), t + 2 * (C + X + P));
}

#[test]
fn a_program_waits_for_the_read_it_writes_back() {
    // A copy between dies: the read on die 0, then the program on die 1 once the data is in.
    let mut e = engine(hw(2, 1, 1, 1), &Fifo);
    e.begin(Class::HostWrite, 0);
    let read = e.op(OpKind::Read, 0, 0, OpRef::Done(0));
    assert_eq!(read, OpRef::Done(C + R + X));
    let program = e.op(OpKind::Program, 1, 0, read);
    assert_eq!(program, OpRef::Done(C + R + X + C + X + P));
    assert_eq!(end_of(e.end()), C + R + X + C + X + P);
}

#[test]
fn the_bus_backfills_before_transfers_reserved_for_later() {
    // Chip 0 is busy erasing until c + E; a program queued on it holds the bus only then.
    // Chip 1's read, arriving later but ready earlier, uses the bus before.
    let mut e = engine(hw(1, 2, 1, 1), &Fifo);
    request(&mut e, Class::HostWrite, 0, &[(OpKind::Erase, 0, 0), (OpKind::Program, 0, 0)]);
    let read = request(&mut e, Class::HostRead, 100_000, &[(OpKind::Read, 1, 0)]);
    assert_eq!(end_of(read), 100_000 + C + R + X);
    e.check();
}

#[test]
fn background_work_is_preempted_between_operations_by_host_reads() {
    // Three background erases on one die: the first starts at once, the others queue. A host
    // read arriving during the first waits only for it, then goes ahead of the rest.
    let mut e = engine(hw(1, 1, 1, 1), &Fifo);
    let bg = request(&mut e, Class::Background, 0, &[(OpKind::Erase, 0, 0); 3]);
    let Outcome::Queued { tag: bg_tag } = bg else { panic!("background work queues: {bg:?}") };
    e.advance_before(100_000);
    let read = request(&mut e, Class::HostRead, 100_000, &[(OpKind::Read, 0, 0)]);
    let read_end = C + E + C + R + X;
    assert_eq!(end_of(read), read_end);
    // The background erases finish after it.
    let mut finished = Vec::new();
    while e.step().is_some() {
        e.take_finished(&mut finished);
    }
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].tag, bg_tag);
    assert_eq!(finished[0].end_ns, read_end + 2 * (C + E));
    assert_eq!(e.queued_ops(), 0);
    e.check();
}

#[test]
fn read_priority_passes_queued_writes_but_not_the_one_under_way() {
    let mut e = engine(hw(1, 1, 1, 1), &ReadPriority);
    // Three writes: the first starts at once; the others wait in the die's queue.
    let w = request(
        &mut e,
        Class::HostWrite,
        0,
        &[(OpKind::Program, 0, 0), (OpKind::Program, 0, 1), (OpKind::Program, 0, 2)],
    );
    let Outcome::Queued { tag } = w else { panic!("writes queue behind the first: {w:?}") };
    e.advance_before(1_000);
    let read = request(&mut e, Class::HostRead, 1_000, &[(OpKind::Read, 0, 9)]);
    assert_eq!(end_of(read), (C + X + P) + (C + R + X));
    let mut finished = Vec::new();
    while e.step().is_some() {
        e.take_finished(&mut finished);
    }
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].tag, tag);
    assert_eq!(finished[0].end_ns, 3 * (C + X + P) + (C + R + X));
    // Under FIFO the read would have waited for all three writes.
    let mut f = engine(hw(1, 1, 1, 1), &Fifo);
    request(
        &mut f,
        Class::HostWrite,
        0,
        &[(OpKind::Program, 0, 0), (OpKind::Program, 0, 1), (OpKind::Program, 0, 2)],
    );
    let read = request(&mut f, Class::HostRead, 1_000, &[(OpKind::Read, 0, 9)]);
    assert_eq!(end_of(read), 3 * (C + X + P) + (C + R + X));
}

#[test]
fn queued_dependents_wait_for_their_read() {
    // Under read-priority a write request's read-modify-write: the read and the program both
    // queue (die busy); the program is timed only after the read.
    let mut e = engine(hw(2, 1, 1, 1), &ReadPriority);
    request(&mut e, Class::HostWrite, 0, &[(OpKind::Erase, 0, 0)]);
    e.begin(Class::HostWrite, 10);
    let read = e.op(OpKind::Read, 0, 0, OpRef::Done(0));
    assert!(matches!(read, OpRef::Queued(_)));
    let program = e.op(OpKind::Program, 1, 0, read);
    assert!(matches!(program, OpRef::Queued(_)));
    let Outcome::Queued { tag } = e.end() else { panic!("queued") };
    let mut finished = Vec::new();
    while e.step().is_some() {
        e.take_finished(&mut finished);
    }
    let read_end = C + E + C + R + X;
    assert_eq!(
        finished,
        vec![Finished {
            tag,
            class: Class::HostWrite,
            first_start_ns: C + E,
            end_ns: read_end + C + X + P,
        }]
    );
    e.check();
}
