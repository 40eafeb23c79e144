//! One log: every page goes to region 0 (no clustering; DAC with N = 1).

use super::{PageState, Placement};
use crate::flash::Lpn;

pub struct OneLog;

impl Placement for OneLog {
    fn name(&self) -> &'static str {
        "none"
    }
    fn regions(&self) -> u32 {
        1
    }
    fn host_write(&mut self, _lpn: Lpn, _current: Option<PageState>, _now_ns: u64) -> u8 {
        0
    }
    fn cleaner_copy(&mut self, _lpn: Lpn, _current: PageState, _now_ns: u64) -> u8 {
        0
    }
}
