//! The allocation policies' picks on a small engine: an idle device is walked in
//! channel-way-die-plane order; a busy die is avoided by `dynamic` but not by `round-robin`;
//! `static` follows the address and the victim's plane; planes without room are skipped.

use super::*;
use crate::engine::scheduler::fifo::Fifo;
use crate::engine::{Class, OpKind, OpRef};
use crate::flash::Timing;

fn setup() -> (Hardware, Engine) {
    // 2 gangs × 2 chips × 1 die × 2 planes: CWDP order 0, 4, 2, 6, 1, 5, 3, 7.
    let hw = Hardware {
        gangs: 2,
        channels_per_gang: 1,
        chips_per_channel: 2,
        dies_per_chip: 1,
        planes_per_die: 2,
    };
    let t = Timing {
        read_page_ns: 25_000,
        program_page_ns: 200_000,
        erase_block_ns: 1_500_000,
        transfer_page_ns: 10_000,
        copy_page_ns: None,
        ram_page_ns: 0,
        command_ns: 0,
    };
    (hw, Engine::new(hw, &t, &Fifo))
}

fn set(room: impl Fn(u32) -> bool) -> PlaneSet {
    let mut s = PlaneSet::new(8);
    for p in (0..8).filter(|&p| room(p)) {
        s.insert(p);
    }
    s
}

fn picks(a: &mut dyn Allocator, e: &Engine, n: usize, room: impl Fn(u32) -> bool) -> Vec<u32> {
    let s = set(room);
    (0..n).map(|i| a.host(e, i as u32, Room { a: &s, b: None })).collect()
}

#[test]
fn an_idle_device_is_walked_in_cwdp_order() {
    let (hw, e) = setup();
    // Planes without room are skipped: round-robin walks the planes; dynamic walks the dies
    // (0, 2, 1, 3 in CWDP order) and takes a die's next plane with room.
    let skipped: [(&dyn AllocationSpec, [u32; 4]); 2] =
        [(&dynamic::DynamicSpec, [1, 5, 2, 6]), (&round_robin::RoundRobinSpec, [2, 6, 1, 5])];
    for (spec, expected) in skipped {
        let mut a = spec.build(&hw);
        assert_eq!(picks(a.as_mut(), &e, 9, |_| true), vec![0, 4, 2, 6, 1, 5, 3, 7, 0]);
        let mut a = spec.build(&hw);
        assert_eq!(picks(a.as_mut(), &e, 4, |p| p % 4 != 0), expected.to_vec(), "{}", spec.name());
    }
}

#[test]
fn dynamic_avoids_busy_dies_round_robin_does_not() {
    let (hw, mut e) = setup();
    // Die 0 (planes 0, 1) and die 2 (planes 4, 5) busy.
    e.begin(Class::HostWrite, 0);
    e.op(OpKind::Erase, 0, 0, OpRef::Done(0));
    e.op(OpKind::Erase, 4, 0, OpRef::Done(0));
    e.end();
    let mut d = dynamic::DynamicSpec.build(&hw);
    assert_eq!(picks(d.as_mut(), &e, 4, |_| true), vec![2, 6, 3, 7]);
    let mut r = round_robin::RoundRobinSpec.build(&hw);
    assert_eq!(picks(r.as_mut(), &e, 4, |_| true), vec![0, 4, 2, 6]);
}

#[test]
fn static_follows_the_address_and_the_victims_plane() {
    let (hw, e) = setup();
    let mut s = static_striping::StaticSpec.build(&hw);
    // LPN l → order[l mod 8].
    let all = set(|_| true);
    let room = Room { a: &all, b: None };
    assert_eq!(s.host(&e, 3, room), 6);
    assert_eq!(s.host(&e, 11, room), 6);
    assert_eq!(s.cleaner(&e, 5, room), 5);
    // No room there: the least loaded plane with room instead.
    let not6 = set(|p| p != 6);
    assert_eq!(s.host(&e, 3, Room { a: &not6, b: None }), 0);
    let only7 = set(|p| p == 7);
    assert_eq!(s.cleaner(&e, 5, Room { a: &only7, b: None }), 7);
    // Room is the union of the two sets.
    let none = set(|_| false);
    assert_eq!(s.host(&e, 3, Room { a: &none, b: Some(&only7) }), 7);
}

#[test]
fn every_policy_is_registered_under_its_name() {
    for name in names() {
        let spec = resolve(name, &mut crate::spec::Tables::default()).expect("registered");
        assert_eq!(spec.name(), name);
    }
    assert_eq!(names(), vec!["dynamic", "round-robin", "static"]);
    let err = resolve("fastest", &mut crate::spec::Tables::default()).unwrap_err();
    assert_eq!(err.key, "ftl.allocation");
}
