//! Goal: each victim policy picks the block its formula says, including the edge cases.
//! Method: build a tiny `BlockTable` by hand (program, close, invalidate at chosen times) and
//! ask each policy.

use super::cat::Cat;
use super::cost_benefit::CostBenefit;
use super::fifo::Fifo;
use super::greedy::Greedy;
use super::VictimPolicy;
use crate::flash::BlockId;
use crate::ftl::block_table::BlockTable;

fn b(n: u32) -> BlockId {
    BlockId::new(n)
}

/// Fills block `b` (4 pages) at time `t` and closes it.
fn fill(t: &mut BlockTable, block: u32, at: u64) {
    let block = b(block);
    t.open(block, 0, at);
    for _ in 0..4 {
        t.program(block, at);
    }
    t.close(block);
}

fn table() -> BlockTable {
    // Blocks 0..3 filled at times 0, 10, 20; then invalidations:
    // b0: 1 invalid at t=100 (u = 3/4); b1: 2 invalid at t=30 (u = 1/2);
    // b2: 3 invalid at t=90 (u = 1/4).
    let mut t = BlockTable::new(5, 4);
    fill(&mut t, 0, 0);
    fill(&mut t, 1, 10);
    fill(&mut t, 2, 20);
    t.invalidate(b(1), 30);
    t.invalidate(b(1), 30);
    for _ in 0..3 {
        t.invalidate(b(2), 90);
    }
    t.invalidate(b(0), 100);
    t.check();
    t
}

#[test]
fn greedy_takes_fewest_valid() {
    assert_eq!(Greedy.select(&table(), 200).unwrap().block, b(2));
}

#[test]
fn fifo_takes_first_closed() {
    assert_eq!(Fifo.select(&table(), 200).unwrap().block, b(0));
}

#[test]
fn cost_benefit_formula() {
    // now = 200: ages (+1 ns) b0 101, b1 171, b2 111.
    // a(1-u)/2u: b0 101*0.25/1.5 = 16.8; b1 171*0.5/1 = 85.5; b2 111*0.75/0.5 = 166.5 → b2.
    assert_eq!(CostBenefit::default().select(&table(), 200).unwrap().block, b(2));
    // Much later, b1's age advantage is not enough either: ratio b2/b1 → 1.5/0.5 = 3 > 1.
    assert_eq!(CostBenefit::default().select(&table(), 1_000_000).unwrap().block, b(2));
}

#[test]
fn cat_formula_uses_erase_counts() {
    let mut t = table();
    // CAT = u/((1-u) a) (t+1). With no erases: b2 (1/3)/111 = 0.0030, b1 1/171 = 0.0058 → b2.
    assert_eq!(Cat { scan_limit: 100 }.select(&t, 200).unwrap().block, b(2));
    // Wear b2 out: 3 erases → (1/3)·4/111 = 0.012 > b1's 0.0058 → b1.
    for _ in 0..3 {
        t.take_victim(b(2));
        for _ in 0..1 {
            t.invalidate(b(2), 150);
        }
        t.erased(b(2));
        fill(&mut t, 2, 150);
        for _ in 0..3 {
            t.invalidate(b(2), 150);
        }
    }
    // b2 now: u = 1/4, age 51, t = 3 → (1/3)*4/51 = 0.026; b1: 1/171 = 0.0058 → b1.
    assert_eq!(t.erase_count[2], 3);
    assert_eq!(Cat { scan_limit: 100 }.select(&t, 200).unwrap().block, b(1));
    // With a scan limit of one block the search stops after b2 and says so.
    let capped = Cat { scan_limit: 1 }.select(&t, 200).unwrap();
    assert_eq!((capped.block, capped.capped), (b(2), true));
}

#[test]
fn empty_block_is_taken_first_and_full_block_last() {
    let mut t = table();
    for _ in 0..3 {
        t.invalidate(b(0), 150);
    }
    // b0 now has 0 valid: free to clean for every policy but FIFO.
    assert_eq!(Greedy.select(&t, 200).unwrap().block, b(0));
    assert_eq!(CostBenefit::default().select(&t, 200).unwrap().block, b(0));
    assert_eq!(Cat { scan_limit: 10 }.select(&t, 200).unwrap().block, b(0));
    // Only full blocks: still a choice (the caller's validation keeps this from looping).
    let mut full = BlockTable::new(2, 4);
    fill(&mut full, 0, 0);
    assert_eq!(CostBenefit::default().select(&full, 5).unwrap().block, b(0));
    assert_eq!(Cat { scan_limit: 10 }.select(&full, 5).unwrap().block, b(0));
    assert!(Greedy.select(&BlockTable::new(2, 4), 0).is_none());
}

#[test]
fn cat_bound_prunes_without_capping() {
    // b2 is best and the bound rules out b1 and b0 unseen: one block examined, not capped.
    let s = Cat { scan_limit: 1 }.select(&table(), 200).unwrap();
    assert_eq!((s.block, s.capped), (b(2), false));
}

/// SepBIT's simulator's form: (1−u)/u·√(host writes since the block filled), over every block.
#[test]
fn cost_benefit_sqrt_append_age() {
    let mut t = table();
    t.closed_at_write = vec![0, 90, 99, 0, 0];
    t.host_writes = 100;
    let mut cb = CostBenefit::sqrt_append_age();
    assert!(cb.needs_write_clock());
    assert!(!CostBenefit::default().needs_write_clock());
    // b0: (1/4)/(3/4)·√100 = 3.33; b1: 1·√10 = 3.16; b2: 3·√1 = 3 → b0 (the LFS form: b2).
    assert_eq!(cb.select(&t, 200).unwrap().block, b(0));
    assert_eq!(CostBenefit::default().select(&t, 200).unwrap().block, b(2));
    // b2 filled at 95: 3·√5 = 6.7 → b2.
    t.closed_at_write[2] = 95;
    assert_eq!(cb.select(&t, 200).unwrap().block, b(2));
}
