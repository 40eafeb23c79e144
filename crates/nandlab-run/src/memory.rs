//! Refuses a configuration whose tables would not fit in the memory the process may use, before
//! anything is allocated (`nandlab_core::estimate_memory` says how much a configuration needs).
//! The limit is `run.memory_limit_bytes` when set, else the smallest of what the machine allows
//! this process: available memory (`MemAvailable`), the cgroup's limit (`memory.max` less what it
//! already uses) and the address-space limit (`ulimit -v`, less what is already mapped).

use nandlab_core::{estimate_memory, human_bytes};
use nandlab_core::{ConfigError, Resolved};

/// A memory limit and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    pub bytes: u64,
    pub source: String,
}

/// The limit a run of `r` is held to (`None`: nothing known, e.g. not Linux).
#[must_use]
pub fn limit(r: &Resolved) -> Option<MemoryLimit> {
    if let Some(bytes) = r.config.run.memory_limit_bytes {
        return Some(MemoryLimit { bytes, source: "run.memory_limit_bytes".into() });
    }
    detected()
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `Key:   1234 kB` lines of /proc/meminfo and /proc/self/status.
fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse::<u64>().ok().map(|k| k * 1024)
}

/// What the machine allows this process now.
#[must_use]
pub fn detected() -> Option<MemoryLimit> {
    let mut found: Vec<MemoryLimit> = Vec::new();
    if let Some(b) = read("/proc/meminfo").and_then(|m| kib_field(&m, "MemAvailable:")) {
        found.push(MemoryLimit { bytes: b, source: "available memory (MemAvailable)".into() });
    }
    if let Some(max) = read("/sys/fs/cgroup/memory.max").and_then(|m| m.trim().parse::<u64>().ok())
    {
        let used = read("/sys/fs/cgroup/memory.current")
            .and_then(|c| c.trim().parse::<u64>().ok())
            .unwrap_or(0);
        found.push(MemoryLimit {
            bytes: max.saturating_sub(used),
            source: "the cgroup's memory.max".into(),
        });
    }
    // "Max address space   SOFT   HARD   bytes" (or "unlimited").
    let address_space = read("/proc/self/limits").and_then(|l| {
        let line = l.lines().find(|l| l.starts_with("Max address space"))?.to_string();
        line.split_whitespace().nth(3)?.parse::<u64>().ok()
    });
    if let Some(soft) = address_space {
        let mapped = read("/proc/self/status").and_then(|s| kib_field(&s, "VmSize:")).unwrap_or(0);
        found.push(MemoryLimit {
            bytes: soft.saturating_sub(mapped),
            source: "the address-space limit (ulimit -v)".into(),
        });
    }
    found.into_iter().min_by_key(|l| l.bytes)
}

/// Refuses `r` when its estimated memory passes the limit: the error names the figure, its
/// parts, the limit and its source, and the keys to change (with the size that would fit).
pub fn check(r: &Resolved, served: bool) -> Result<(), ConfigError> {
    let Some(limit) = limit(r) else { return Ok(()) };
    check_against(r, served, &limit)
}

/// `check` against a given limit.
pub fn check_against(r: &Resolved, served: bool, limit: &MemoryLimit) -> Result<(), ConfigError> {
    let e = estimate_memory(r, served);
    let total = e.total_bytes();
    if total <= limit.bytes {
        return Ok(());
    }
    // Tables scale with the device: the largest logical size that fits, about.
    let other = total - e.geometry_bytes();
    let logical = r.geometry.logical_bytes();
    let fits = if limit.bytes > other && e.geometry_bytes() > 0 {
        let share = (limit.bytes - other) as f64 / e.geometry_bytes() as f64;
        format!("about {} fits", human_bytes((logical as f64 * share) as u64))
    } else {
        "no device fits beside the buffer and RAM region".to_string()
    };
    // Near the limit both round to the same figure: then say the exact byte counts.
    let (mut need, mut have) = (human_bytes(total), human_bytes(limit.bytes));
    if need == have {
        need = format!("{need} ({total} bytes)");
        have = format!("{have} ({} bytes)", limit.bytes);
    }
    Err(ConfigError::new(
        "device.logical_bytes",
        format!(
            "this device ({} logical) needs an estimated {} of RAM ({}), but the limit is {} \
             ({}): lower device.logical_bytes or device.blocks ({fits}), raise \
             device.page_size_bytes, shrink buffer.size_bytes or the RAM region, or set \
             run.memory_limit_bytes if more memory is really available",
            human_bytes(logical),
            need,
            e.describe(),
            have,
            limit.source,
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_core::Config;

    fn resolve(o: &[&str]) -> Resolved {
        Config::from_overrides(o).unwrap().resolve().unwrap()
    }

    #[test]
    fn a_device_too_large_for_the_limit_is_refused_naming_the_keys() {
        let r = resolve(&["device.logical_bytes=1099511627776"]);
        let limit = MemoryLimit { bytes: 2 << 30, source: "run.memory_limit_bytes".into() };
        let e = check_against(&r, false, &limit).unwrap_err();
        assert_eq!(e.key, "device.logical_bytes");
        for want in ["1.0 TiB logical", "needs an estimated", "2.0 GiB", "fits", "flash metadata"] {
            assert!(e.message.contains(want), "{want}: {}", e.message);
        }
        let small = resolve(&["device.logical_bytes=1073741824"]);
        check_against(&small, false, &limit).unwrap();
    }

    #[test]
    fn the_limit_key_wins_over_detection() {
        let r = resolve(&["run.memory_limit_bytes=12345"]);
        assert_eq!(
            limit(&r),
            Some(MemoryLimit { bytes: 12345, source: "run.memory_limit_bytes".into() })
        );
        assert!(check(&r, false).is_err(), "the program allowance alone exceeds 12345 bytes");
    }

    #[test]
    fn detection_reads_proc_and_parses_fields() {
        assert_eq!(kib_field("MemAvailable:   2048 kB\n", "MemAvailable:"), Some(2 << 20));
        assert!(detected().is_some_and(|l| l.bytes > 0), "this test runs on Linux");
    }
}
