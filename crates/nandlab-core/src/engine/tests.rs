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

/// Requests' (first start, end) by tag, as the engine times them.
#[derive(Default)]
struct Done(std::collections::HashMap<u64, (u64, u64)>);

impl Done {
    fn take(&mut self, e: &mut Engine) {
        let mut f = Vec::new();
        e.take_finished(&mut f);
        for x in f {
            self.0.insert(x.tag, (x.first_start_ns, x.end_ns));
        }
    }
}

/// One request of `ops` (kind, plane, page) arriving at `at`, after what is queued before
/// `at` has been timed (as the device does); returns its tag.
fn request(
    e: &mut Engine,
    done: &mut Done,
    class: Class,
    at: u64,
    ops: &[(OpKind, u32, u32)],
) -> u64 {
    while e.next_event_ns().is_some_and(|t| t < at) {
        e.step();
        done.take(e);
    }
    e.advance_before(at);
    let tag = e.begin(class, at);
    for &(kind, plane, page) in ops {
        e.op(kind, plane, page, OpRef::Done(0));
    }
    if let Outcome::Timed { first_start_ns, end_ns } = e.end() {
        done.0.insert(tag, (first_start_ns, end_ns));
    }
    tag
}

/// When request `tag` ends (the engine runs until it is timed).
fn end_of(e: &mut Engine, done: &mut Done, tag: u64) -> u64 {
    first_and_end(e, done, tag).1
}

fn first_and_end(e: &mut Engine, done: &mut Done, tag: u64) -> (u64, u64) {
    loop {
        if let Some(&t) = done.0.get(&tag) {
            return t;
        }
        assert!(e.step().is_some(), "request {tag} never finishes");
        done.take(e);
    }
}

#[test]
fn an_isolated_read_is_command_array_transfer() {
    let (mut e, mut d) = (engine(hw(1, 1, 1, 1), &Fifo), Done::default());
    let r = request(&mut e, &mut d, Class::HostRead, 0, &[(OpKind::Read, 0, 0)]);
    assert_eq!(first_and_end(&mut e, &mut d, r), (0, C + R + X));
    // A program: command and data in, then the array.
    let w = request(&mut e, &mut d, Class::HostWrite, 100_000, &[(OpKind::Program, 0, 0)]);
    assert_eq!(end_of(&mut e, &mut d, w), 100_000 + C + X + P);
}

#[test]
fn one_die_serializes_to_the_sum_of_operation_times() {
    let (mut e, mut d) = (engine(hw(1, 1, 1, 1), &Fifo), Done::default());
    let ops = [(OpKind::Read, 0, 0), (OpKind::Program, 0, 1), (OpKind::Erase, 0, 0)];
    let a = request(&mut e, &mut d, Class::HostWrite, 7, &ops);
    let busy = 7 + (C + R + X) + (C + X + P) + (C + E);
    // A request arriving while the die is busy starts when it is free.
    let b = request(&mut e, &mut d, Class::HostRead, 10, &[(OpKind::Read, 0, 3)]);
    assert_eq!(end_of(&mut e, &mut d, a), busy);
    assert_eq!(first_and_end(&mut e, &mut d, b), (busy, busy + C + R + X));
}

#[test]
fn k_reads_on_k_chips_of_one_channel_share_its_bus() {
    // Commands go out back to back (i·c), the arrays work in parallel, the transfers queue on
    // the bus: read k's data goes out at c + R + k·x (x > c, and every command fits before
    // the first transfer), so the last ends at c + R + K·x.
    for k in 1..=4u32 {
        let (mut e, mut d) = (engine(hw(1, k, 1, 1), &Fifo), Done::default());
        let ops: Vec<_> = (0..k).map(|chip| (OpKind::Read, chip, 0)).collect();
        let r = request(&mut e, &mut d, Class::HostRead, 0, &ops);
        assert_eq!(end_of(&mut e, &mut d, r), C + R + u64::from(k) * X, "{k} chips");
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
    let ops: Vec<_> = (0..k).map(|chip| (OpKind::Program, chip, 0)).collect();
    let (mut e, mut d) = (engine(hw(1, k, 1, 1), &Fifo), Done::default());
    let w = request(&mut e, &mut d, Class::HostWrite, 0, &ops);
    assert_eq!(end_of(&mut e, &mut d, w), u64::from(k) * (C + X) + P);
    // K gangs (independent buses): all in parallel.
    let (mut e, mut d) = (engine(hw(k, 1, 1, 1), &Fifo), Done::default());
    let w = request(&mut e, &mut d, Class::HostWrite, 0, &ops);
    assert_eq!(end_of(&mut e, &mut d, w), C + X + P);
    assert_eq!(e.stats().die_busy_ns, vec![C + X + P; k as usize]);
}

#[test]
fn a_gang_moves_its_channels_lanes_in_lock_step() {
    // Four channels in one gang: one effective page is one operation, its four flash pages
    // moved at once (one transfer time).
    let h = Hardware { channels_per_gang: 4, ..hw(1, 1, 1, 1) };
    let (mut e, mut d) = (engine(h, &Fifo), Done::default());
    let w = request(&mut e, &mut d, Class::HostWrite, 0, &[(OpKind::Program, 0, 0)]);
    assert_eq!(end_of(&mut e, &mut d, w), C + X + P);
}

#[test]
fn a_read_behind_an_erase_on_another_chip_finishes_first() {
    let (mut e, mut d) = (engine(hw(1, 2, 1, 1), &Fifo), Done::default());
    let erase = request(&mut e, &mut d, Class::HostWrite, 0, &[(OpKind::Erase, 0, 0)]);
    // Arrives after the erase's command is out; chip 1 is idle.
    let read = request(&mut e, &mut d, Class::HostRead, 5_000, &[(OpKind::Read, 1, 0)]);
    // A read of chip 0 waits for the erase.
    let read0 = request(&mut e, &mut d, Class::HostRead, 6_000, &[(OpKind::Read, 0, 0)]);
    assert_eq!(end_of(&mut e, &mut d, erase), C + E);
    assert_eq!(end_of(&mut e, &mut d, read), 5_000 + C + R + X);
    assert!(end_of(&mut e, &mut d, read) < end_of(&mut e, &mut d, erase));
    assert_eq!(end_of(&mut e, &mut d, read0), C + E + C + R + X);
}

#[test]
fn multi_plane_operations_share_command_and_array_time() {
    let (mut e, mut d) = (engine(hw(1, 1, 1, 2), &Fifo), Done::default());
    let mut at = 0;
    let mut run = |ops: &[(OpKind, u32, u32)], class: Class| {
        let tag = request(&mut e, &mut d, class, at, ops);
        let (first, end) = first_and_end(&mut e, &mut d, tag);
        assert_eq!(first, at);
        at += 10_000_000;
        end - first
    };
    // Same page offset on both planes: c, both pages' data (2x), one program.
    let ops = [(OpKind::Program, 0, 5), (OpKind::Program, 1, 5)];
    assert_eq!(run(&ops, Class::HostWrite), C + 2 * X + P);
    // Different offsets: two operations one after the other.
    let ops = [(OpKind::Program, 0, 6), (OpKind::Program, 1, 7)];
    assert_eq!(run(&ops, Class::HostWrite), 2 * (C + X + P));
    // Reads: c, one array time, the two pages out one after the other.
    let ops = [(OpKind::Read, 0, 1), (OpKind::Read, 1, 1)];
    assert_eq!(run(&ops, Class::HostRead), C + R + 2 * X);
    // Erases of any blocks of the two planes: one erase time.
    let ops = [(OpKind::Erase, 0, 0), (OpKind::Erase, 1, 3)];
    assert_eq!(run(&ops, Class::HostWrite), C + E);
    // The same plane twice never merges.
    let ops = [(OpKind::Program, 0, 8), (OpKind::Program, 0, 9)];
    assert_eq!(run(&ops, Class::HostWrite), 2 * (C + X + P));
}

#[test]
fn queued_operations_of_two_requests_join_as_one_multi_plane_program() {
    // Plane 0 busy with an erase; two one-page writes arrive for planes 0 and 1 (same page
    // offset): plane 1's die is the same die, so both wait, and when the die is free they go
    // as one multi-plane program.
    let (mut e, mut d) = (engine(hw(1, 1, 1, 2), &Fifo), Done::default());
    request(&mut e, &mut d, Class::HostWrite, 0, &[(OpKind::Erase, 0, 0)]);
    let a = request(&mut e, &mut d, Class::HostWrite, 10, &[(OpKind::Program, 0, 0)]);
    let b = request(&mut e, &mut d, Class::HostWrite, 20, &[(OpKind::Program, 1, 0)]);
    let end = C + E + C + 2 * X + P;
    assert_eq!(end_of(&mut e, &mut d, a), end);
    assert_eq!(end_of(&mut e, &mut d, b), end);
}

#[test]
fn a_program_waits_for_the_read_it_writes_back() {
    // A copy between dies: the read on die 0, then the program on die 1 once the data is in.
    let mut e = engine(hw(2, 1, 1, 1), &Fifo);
    e.begin(Class::HostWrite, 0);
    let read = e.op(OpKind::Read, 0, 0, OpRef::Done(0));
    assert_eq!(read, OpRef::Done(C + R + X));
    // Die 1 is free: the program is timed at once, from when the data is in (nothing could
    // pass it in die 1's FIFO queue anyway).
    let program = e.op(OpKind::Program, 1, 0, read);
    assert_eq!(program, OpRef::Done(C + R + X + C + X + P));
    assert_eq!(e.end(), Outcome::Timed { first_start_ns: 0, end_ns: C + R + X + C + X + P });
}

#[test]
fn the_bus_backfills_before_transfers_reserved_for_later() {
    // Chip 0 is busy erasing until c + E; the program behind it holds the bus only then.
    // Chip 1's read, arriving later but ready earlier, uses the bus before.
    let (mut e, mut d) = (engine(hw(1, 2, 1, 1), &Fifo), Done::default());
    let w = request(
        &mut e,
        &mut d,
        Class::HostWrite,
        0,
        &[(OpKind::Erase, 0, 0), (OpKind::Program, 0, 0)],
    );
    let read = request(&mut e, &mut d, Class::HostRead, 100_000, &[(OpKind::Read, 1, 0)]);
    assert_eq!(end_of(&mut e, &mut d, read), 100_000 + C + R + X);
    assert_eq!(end_of(&mut e, &mut d, w), C + E + C + X + P);
    e.check();
}

#[test]
fn background_work_is_preempted_between_operations_by_host_reads() {
    // Three background erases on one die: the first starts at once, the others queue. A host
    // read arriving during the first waits only for it, then goes ahead of the rest.
    let (mut e, mut d) = (engine(hw(1, 1, 1, 1), &Fifo), Done::default());
    let bg = request(&mut e, &mut d, Class::Background, 0, &[(OpKind::Erase, 0, 0); 3]);
    let read = request(&mut e, &mut d, Class::HostRead, 100_000, &[(OpKind::Read, 0, 0)]);
    let read_end = C + E + C + R + X;
    assert_eq!(end_of(&mut e, &mut d, read), read_end);
    // The background erases finish after it.
    assert_eq!(end_of(&mut e, &mut d, bg), read_end + 2 * (C + E));
    assert_eq!(e.queued_ops(), 0);
    e.check();
}

#[test]
fn read_priority_passes_queued_writes_but_not_the_one_under_way() {
    let writes = [(OpKind::Program, 0, 0), (OpKind::Program, 0, 1), (OpKind::Program, 0, 2)];
    // Three writes: the first starts at once; the others wait in the die's queue.
    let (mut e, mut d) = (engine(hw(1, 1, 1, 1), &ReadPriority), Done::default());
    let w = request(&mut e, &mut d, Class::HostWrite, 0, &writes);
    let r = request(&mut e, &mut d, Class::HostRead, 1_000, &[(OpKind::Read, 0, 9)]);
    assert_eq!(end_of(&mut e, &mut d, r), (C + X + P) + (C + R + X));
    assert_eq!(end_of(&mut e, &mut d, w), 3 * (C + X + P) + (C + R + X));
    // Under FIFO the read waits for all three writes.
    let (mut e, mut d) = (engine(hw(1, 1, 1, 1), &Fifo), Done::default());
    request(&mut e, &mut d, Class::HostWrite, 0, &writes);
    let r = request(&mut e, &mut d, Class::HostRead, 1_000, &[(OpKind::Read, 0, 9)]);
    assert_eq!(end_of(&mut e, &mut d, r), 3 * (C + X + P) + (C + R + X));
}

#[test]
fn queued_dependents_wait_for_their_read() {
    // A write request's read-modify-write on a busy die: the read and the program both queue;
    // the program (on the other die) is timed only after the read.
    let (mut e, mut d) = (engine(hw(2, 1, 1, 1), &ReadPriority), Done::default());
    request(&mut e, &mut d, Class::HostWrite, 0, &[(OpKind::Erase, 0, 0)]);
    e.begin(Class::HostWrite, 10);
    let read = e.op(OpKind::Read, 0, 0, OpRef::Done(0));
    assert!(matches!(read, OpRef::Queued(_)));
    let program = e.op(OpKind::Program, 1, 0, read);
    assert!(matches!(program, OpRef::Queued(_)));
    let Outcome::Queued { tag } = e.end() else { panic!("queued") };
    let read_end = C + E + C + R + X;
    assert_eq!(first_and_end(&mut e, &mut d, tag), (C + E, read_end + C + X + P));
    e.check();
}
