//! Configuration: parse (TOML, `--set key=value` overrides, JSON from Python) → `validate` →
//! `Resolved` (every default filled in, derived values computed and checked once).
//!
//! Every key has a default, so an empty config runs. Keys carry their unit in the name. Errors
//! name the dotted key at fault. Defaults live here and in `presets` only.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::allocation::AllocationSpec;
use crate::engine::SchedulerSpec;

use crate::buffer::BufferSpec;
use crate::engine::hardware::{Hardware, HARDWARE_LEVEL_MAX, HARDWARE_UNITS_MAX};
use crate::error::ConfigError;
use crate::ftl::hybrid::recycling::RecyclingSpec;
use crate::ftl::policy::PlacementSpec;
use crate::ftl::FtlSpec;
use crate::presets;
use crate::spec::{check, one_of, ExtraKeys, Family, Tables};
use crate::wear::WearSpec;
use crate::workload::WorkloadSpec;

// Each family's raw table lives in the family's module; these re-exports keep the paths the
// other crates and the docs use.
pub use crate::buffer::BufferConfig;
pub use crate::ftl::FtlConfig;
pub use crate::wear::WearConfig;
pub use crate::workload::WorkloadConfig;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
// No `deny_unknown_fields` (it cannot go with `flatten`): `from_value` refuses a table that is
// neither one of the sections below nor one a registered policy declares.
#[serde(default)]
pub struct Config {
    pub device: DeviceConfig,
    pub timing: TimingConfig,
    pub ftl: FtlConfig,
    pub workload: WorkloadConfig,
    pub run: RunConfig,
    pub serve: ServeConfig,
    pub buffer: BufferConfig,
    pub wear: WearConfig,
    /// Tables policies declare for their own parameters (`[dac]`, `[deb]`, ...; see
    /// `spec::Param`).
    #[serde(flatten)]
    pub tables: BTreeMap<String, ExtraKeys>,
}

/// The configuration's typed sections (every other top-level table is a policy's).
const SECTIONS: &[&str] =
    &["device", "timing", "ftl", "workload", "run", "serve", "buffer", "wear"];

/// Every policy family's declarations: what `Tables::settle` records and refuses.
fn families() -> Vec<Family> {
    vec![
        crate::ftl_kinds::family(),
        crate::gc::family(),
        crate::placement::family(),
        RecyclingSpec::family(),
        BufferSpec::family(),
        WearSpec::family(),
        crate::allocation::family(),
        crate::engine::scheduler::family(),
        crate::workload::kinds::family(),
    ]
}

/// Every key a configuration may hold, dotted and sorted: each section's fields and every
/// parameter a registered policy declares (a structured one, such as `workload.fs`, by its own
/// key). What `nandlab print-config --keys` prints and the README's key table is checked against.
#[must_use]
pub fn keys() -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    if let Ok(serde_json::Value::Object(top)) = serde_json::to_value(Config::default()) {
        for (section, fields) in top {
            if let serde_json::Value::Object(fields) = fields {
                out.extend(fields.keys().map(|k| format!("{section}.{k}")));
            }
        }
    }
    for family in families() {
        for (_, params) in &family.entries {
            out.extend(params.iter().map(|p| format!("{}.{}", p.table, p.key)));
        }
    }
    // Left out of the serialized default (so results from before it stay identical).
    out.insert("run.timing".to_string());
    out.into_iter().collect()
}

/// The tables the policies declare beyond the typed sections.
fn policy_tables(families: &[Family]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = families
        .iter()
        .flat_map(|f| f.entries.iter().flat_map(|(_, ps)| ps.iter().map(|p| p.table)))
        .filter(|t| !SECTIONS.contains(t))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// `nandlab serve`: the simulated SSD as a block device over NBD.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Hold each reply until its simulated completion time.
    pub emulate_latency: bool,
    /// `full` (every page's payload in the image) or `metadata-only`.
    pub store: String,
    /// How tables are rebuilt at start-up: `scan` (every OOB record) or `checkpoint`.
    pub recovery: String,
    /// Export name announced to clients (clients may also connect with no name).
    pub export_name: String,
    /// How often the `--stats-json` file is rewritten.
    pub stats_interval_s: f64,
    /// How often a checkpoint is written with `serve.recovery = "checkpoint"` (LFSS: 30 s).
    pub checkpoint_interval_s: f64,
    /// The battery behind a RAM region (DEB's EBR, DAC's RAM region) of a served drive: `ok`
    /// (it is persisted in the image's NVRAM area on every write and restored at start-up) or
    /// `failed` (this start-up models a power cut with a dead battery: the NVRAM content is
    /// dropped and reported as lost; the host reads the older flash copies).
    pub ram_region_battery: String,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            emulate_latency: true,
            store: "full".into(),
            recovery: "scan".into(),
            export_name: "nandlab".into(),
            stats_interval_s: 1.0,
            checkpoint_interval_s: 30.0,
            ram_region_battery: "ok".into(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceConfig {
    /// Named preset giving default geometry and timing (`nandlab presets`).
    pub preset: String,
    pub page_size_bytes: Option<u64>,
    pub pages_per_block: Option<u32>,
    /// Physical erase blocks. Unset: from `device.logical_bytes` ÷ `device.utilization`, from the
    /// trace's footprint for trace workloads, or the preset's default.
    pub blocks: Option<u32>,
    /// Logical pages ÷ physical pages. Default 0.8.
    pub utilization: Option<f64>,
    /// Logical capacity exported to the host (alternative to `device.utilization`).
    pub logical_bytes: Option<u64>,
    pub sector_size_bytes: u64,
    /// The device's RAM for data: the buffer (`buffer.size_bytes`) and a RAM region
    /// (`deb.ebr_size_bytes`, `dac.ram_region_bytes`) must fit in it together. Default a quarter
    /// of the flash's physical bytes, at least 64 MiB.
    pub ram_bytes: Option<u64>,
    /// The parallel hardware (`engine::hardware`): independent gangs (each with its own bus) ×
    /// lock-stepped channels per gang (the effective page is `page_size_bytes` × this) × chips
    /// per channel × dies per chip × planes per die. Default: the preset's (1 of each but
    /// `gp5086`'s 4 channels per gang). `device.blocks` is the total of flash blocks, a multiple
    /// of channels_per_gang × planes over the device.
    pub gangs: Option<u32>,
    pub channels_per_gang: Option<u32>,
    pub chips_per_channel: Option<u32>,
    pub dies_per_chip: Option<u32>,
    pub planes_per_die: Option<u32>,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        Self {
            preset: "generic".into(),
            page_size_bytes: None,
            pages_per_block: None,
            blocks: None,
            utilization: None,
            logical_bytes: None,
            sector_size_bytes: 512,
            ram_bytes: None,
            gangs: None,
            channels_per_gang: None,
            chips_per_channel: None,
            dies_per_chip: None,
            planes_per_die: None,
        }
    }
}

/// Overrides of the preset's per-page timing.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct TimingConfig {
    pub read_page_ns: Option<u64>,
    pub program_page_ns: Option<u64>,
    pub erase_block_ns: Option<u64>,
    pub transfer_page_ns: Option<u64>,
    /// Copyback time per page; 0 disables copyback (copy = read + 2 transfers + program).
    pub copy_page_ns: Option<u64>,
    pub ram_page_ns: Option<u64>,
    /// Issuing a command over the bus before an operation (the sim-engine's command phase).
    pub command_ns: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub seed: u64,
    /// Run the O(n) invariant checker every this many requests (0 = never). For tests.
    pub check_every_requests: u64,
    /// Record a wear sample (`metrics.wear_samples`) each time the host has written another
    /// this many bytes, counted over the whole run (prefill and warm-up included, so the curve
    /// starts at the fresh device), plus one at the end. Unset: no sampling.
    pub sample_every_bytes: Option<u64>,
    /// RAM the run may use. A configuration whose estimated tables (`memory::estimate`) do not
    /// fit is refused before anything is allocated. Unset: what the machine allows the process
    /// (the smallest of available memory, the cgroup limit and the address-space limit).
    pub memory_limit_bytes: Option<u64>,
    /// `"on"` (the default): the sim-engine times every operation. `"off"`: counts only (WA,
    /// erases, copies, wear, merges), no simulated time or latency, for configurations whose
    /// counts do not depend on time (`Resolved::check_counts_only`). Left out of
    /// configurations that keep the default, so results from before the key stay identical.
    #[serde(skip_serializing_if = "RunTiming::is_on")]
    pub timing: RunTiming,
}

/// `run.timing`.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RunTiming {
    #[default]
    On,
    Off,
}

impl RunTiming {
    #[must_use]
    pub fn is_on(&self) -> bool {
        *self == Self::On
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            check_every_requests: 0,
            sample_every_bytes: None,
            memory_limit_bytes: None,
            timing: RunTiming::On,
        }
    }
}

pub use crate::flash::{Geometry, Timing};

/// A validated configuration with every default filled in, and the typed spec of every policy
/// family. `config` is the filled config itself (what `print-config` shows and every result
/// records); consumers read the typed values, never its policy strings.
#[derive(Clone, Debug, Serialize)]
pub struct Resolved {
    pub config: Config,
    /// The FTL's geometry: effective pages and blocks (`engine::hardware`).
    pub geometry: Geometry,
    /// The parallel hardware the sim-engine times operations on.
    pub hardware: Hardware,
    pub timing: Timing,
    #[serde(skip)]
    pub allocation: Arc<dyn AllocationSpec>,
    #[serde(skip)]
    pub scheduler: Arc<dyn SchedulerSpec>,
    /// Flash regions (logs) of the page FTL's placement; 1 for the hybrid kinds.
    pub regions: u32,
    /// The page FTL's free-block reserve; 0 for the hybrid kinds.
    pub gc_free_blocks_min: u32,
    #[serde(skip)]
    pub ftl: FtlSpec,
    /// Mapping-table zones (`ftl.mapping_zone_bytes`); `None`: the whole table is resident.
    #[serde(skip)]
    pub zones: Option<crate::ftl::zones::ZoneShape>,
    #[serde(skip)]
    pub buffer: Option<BufferSpec>,
    #[serde(skip)]
    pub wear: WearSpec,
    #[serde(skip)]
    pub workload: WorkloadSpec,
    /// The device is a served drive (`nandlab serve`), which must be able to recover from a
    /// crash at any instant: the hybrid FTLs then keep one more block spare (recovery may have
    /// to finish a merge a crash interrupted, which needs a free block) — also against
    /// retirement of worn blocks. Set by the serve front, never by a config key.
    #[serde(skip)]
    pub served: bool,
}

const UTILIZATION_DEFAULT: f64 = 0.8;

impl Resolved {
    /// The page FTL's placement (`None` for the hybrid kinds).
    #[must_use]
    pub fn placement(&self) -> Option<&dyn PlacementSpec> {
        self.ftl.page().map(|p| p.placement.as_ref())
    }

    /// Pages of the page FTL's RAM region: DEB's EBR or DAC's RAM region (0 without one).
    #[must_use]
    pub fn ram_region_pages(&self) -> u32 {
        let bytes = self.placement().map_or(0, PlacementSpec::ram_region_bytes);
        (bytes / self.geometry.page_size_bytes) as u32
    }

    /// Rule 5's threshold as a fraction of the RAM region.
    #[must_use]
    pub fn ram_write_back_threshold(&self) -> f64 {
        self.placement().map_or(1.0, PlacementSpec::ram_write_back_threshold)
    }

    /// Pages the RAM buffer holds (0 without one).
    #[must_use]
    pub fn buffer_pages(&self) -> u32 {
        self.buffer.as_ref().map_or(0, BufferSpec::capacity_pages)
    }

    /// The run needs the workload's future (the oracle placement).
    #[must_use]
    pub fn needs_future(&self) -> bool {
        self.placement().is_some_and(PlacementSpec::needs_future)
    }
}

impl Config {
    /// Parses TOML text. `source` names the file in errors.
    pub fn from_toml(text: &str, source: &str) -> Result<Self, ConfigError> {
        let value: toml::Value = toml::from_str(text).map_err(|e| {
            ConfigError::new("", format!("{source}: {}", toml_error_message(text, &e)))
        })?;
        Self::from_value(value)
    }

    /// Parses a `toml::Value` table (the result of merging files and overrides).
    pub fn from_value(value: toml::Value) -> Result<Self, ConfigError> {
        let families = families();
        let tables = policy_tables(&families);
        if let Some(top) = value.as_table() {
            for (key, v) in top {
                if SECTIONS.contains(&key.as_str()) {
                    continue;
                }
                let expected: Vec<String> =
                    SECTIONS.iter().chain(&tables).map(|s| format!("`{s}`")).collect();
                if !tables.contains(&key.as_str()) {
                    return Err(ConfigError::new(
                        key.as_str(),
                        format!("unknown field `{key}`, expected one of {}", expected.join(", ")),
                    ));
                }
                check(v.is_table(), key, format!("[{key}] must be a table"))?;
            }
        }
        let text = toml::to_string(&value).map_err(|e| ConfigError::new("", e.to_string()))?;
        let config = toml::from_str::<Config>(&text).map_err(|e| {
            let message = e.message().to_string();
            // serde names the unknown field but not its table: report the best key we have.
            let key = e.span().and_then(|span| key_at(&text, span.start)).unwrap_or_default();
            ConfigError::new(key, message)
        })?;
        // The family tables keep keys their fields do not declare for the policies' parameters;
        // a key no registered policy declares is a typo, refused as early as serde refuses
        // other tables'.
        crate::spec::refuse_undeclared(&config.policy_maps(), &families)?;
        Ok(config)
    }

    /// Parses JSON (the Python front end's config dicts).
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ConfigError::new("", e.to_string()))?;
        let value = json_to_toml(&json, "")?;
        Self::from_value(value)
    }

    /// The default config with `key=value` overrides applied (what `nandlab run --set ...` does
    /// without a file).
    pub fn from_overrides<S: AsRef<str>>(overrides: &[S]) -> Result<Self, ConfigError> {
        let mut v = Self::default().to_value();
        let o: Vec<String> = overrides.iter().map(|s| s.as_ref().to_string()).collect();
        apply_overrides(&mut v, &o)?;
        Self::from_value(v)
    }

    /// The value at a dotted key (`wear.delta`, `dac.ram_region_bytes`), as the configuration
    /// records it (`None`: unset). For tools and tests that read a policy's parameter without
    /// knowing which table holds it in the Rust types.
    #[must_use]
    pub fn value(&self, dotted: &str) -> Option<toml::Value> {
        let mut v = self.to_value();
        for segment in dotted.split('.') {
            v = v.as_table_mut()?.remove(segment)?;
        }
        Some(v)
    }

    /// The keys of every table the policies read (copies), by table name.
    fn policy_maps(&self) -> BTreeMap<String, ExtraKeys> {
        let mut maps = self.tables.clone();
        maps.insert("ftl".into(), self.ftl.extra.clone());
        maps.insert("buffer".into(), self.buffer.extra.clone());
        maps.insert("wear".into(), self.wear.extra.clone());
        maps.insert("workload".into(), self.workload.extra.clone());
        maps.retain(|_, m| !m.is_empty());
        maps
    }

    /// Moves the policies' keys into `Tables` for resolution.
    fn take_tables(&mut self) -> Tables {
        let mut t = Tables::default();
        t.insert("ftl", std::mem::take(&mut self.ftl.extra));
        t.insert("buffer", std::mem::take(&mut self.buffer.extra));
        t.insert("wear", std::mem::take(&mut self.wear.extra));
        t.insert("workload", std::mem::take(&mut self.workload.extra));
        for (name, keys) in std::mem::take(&mut self.tables) {
            t.insert(&name, keys);
        }
        t
    }

    /// Puts the resolved policies' keys back (each declared parameter recorded).
    fn restore_tables(&mut self, tables: Tables) {
        let mut maps = tables.into_maps();
        self.ftl.extra = maps.remove("ftl").unwrap_or_default();
        self.buffer.extra = maps.remove("buffer").unwrap_or_default();
        self.wear.extra = maps.remove("wear").unwrap_or_default();
        self.workload.extra = maps.remove("workload").unwrap_or_default();
        self.tables = maps;
    }

    /// The config as a TOML value (for merging overrides on top).
    #[must_use]
    pub fn to_value(&self) -> toml::Value {
        toml::Value::try_from(self).expect("a Config always serializes")
    }
}

/// The largest integer a configuration holds: configurations are TOML, whose integers are
/// signed 64-bit (a `u64` key takes 0 to 2^63 − 1).
pub const MAX_CONFIG_INTEGER: u64 = i64::MAX as u64;

/// Applies `key=value` overrides to a TOML table. The value is parsed as a TOML value (so
/// `0.9`, `true`, `[1, 2]` keep their types); anything that does not parse is taken as a string,
/// except an integer out of TOML's range, which is refused naming the range.
pub fn apply_overrides(base: &mut toml::Value, overrides: &[String]) -> Result<(), ConfigError> {
    for item in overrides {
        let Some((key, raw)) = item.split_once('=') else {
            return Err(ConfigError::new(item.as_str(), "an override must look like key=value"));
        };
        let key = key.trim();
        let raw = raw.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(ConfigError::new(key, "empty key or key segment"));
        }
        let value = parse_scalar(raw).map_err(|m| ConfigError::new(key, m))?;
        set_path(base, key, value)?;
    }
    Ok(())
}

fn parse_scalar(raw: &str) -> Result<toml::Value, String> {
    let wrapped = format!("v = {raw}");
    match toml::from_str::<toml::Table>(&wrapped) {
        Ok(mut t) => Ok(t.remove("v").unwrap_or_else(|| toml::Value::String(raw.to_string()))),
        // An integer TOML cannot hold would otherwise become a string, and the key's type
        // check would then say "expected u64, found string": name the range instead.
        Err(_) if is_integer_literal(raw) => Err(integer_range_message(raw)),
        Err(_) => Ok(toml::Value::String(raw.to_string())),
    }
}

/// A decimal integer literal (sign and `_` separators allowed), whatever its size.
fn is_integer_literal(raw: &str) -> bool {
    let digits = raw.strip_prefix(['+', '-']).unwrap_or(raw).replace('_', "");
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn integer_range_message(value: &str) -> String {
    format!(
        "{value} is out of range: configuration integers are TOML integers, from \
         -9223372036854775808 to {MAX_CONFIG_INTEGER} (2^63 - 1; a u64 key takes 0 to \
         {MAX_CONFIG_INTEGER}); quote it if a string is meant"
    )
}

fn set_path(root: &mut toml::Value, key: &str, value: toml::Value) -> Result<(), ConfigError> {
    let mut node = root;
    let segments: Vec<&str> = key.split('.').collect();
    for (i, segment) in segments.iter().enumerate() {
        let table = node
            .as_table_mut()
            .ok_or_else(|| ConfigError::new(key, "this key's parent is not a table"))?;
        if i + 1 == segments.len() {
            table.insert((*segment).to_string(), value);
            return Ok(());
        }
        node = table
            .entry((*segment).to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    }
    unreachable!("a key has at least one segment")
}

fn json_to_toml(json: &serde_json::Value, key: &str) -> Result<toml::Value, ConfigError> {
    Ok(match json {
        serde_json::Value::Null => {
            return Err(ConfigError::new(key, "null is not a value: omit the key instead"))
        }
        serde_json::Value::Bool(b) => toml::Value::Boolean(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                toml::Value::Integer(i)
            } else if let Some(u) = n.as_u64() {
                toml::Value::Integer(
                    i64::try_from(u).map_err(|_| {
                        ConfigError::new(key, integer_range_message(&u.to_string()))
                    })?,
                )
            } else {
                toml::Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => toml::Value::String(s.clone()),
        serde_json::Value::Array(items) => toml::Value::Array(
            items.iter().map(|v| json_to_toml(v, key)).collect::<Result<_, _>>()?,
        ),
        serde_json::Value::Object(map) => {
            let mut table = toml::Table::new();
            for (k, v) in map {
                let child = if key.is_empty() { k.clone() } else { format!("{key}.{k}") };
                if v.is_null() {
                    continue; // None from Python means "use the default".
                }
                table.insert(k.clone(), json_to_toml(v, &child)?);
            }
            toml::Value::Table(table)
        }
    })
}

/// Best-effort dotted key of the TOML line containing byte `offset` of `text`.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let mut table = String::new();
    let mut pos = 0;
    for line in text.lines() {
        let end = pos + line.len();
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            table = trimmed.trim_matches(|c| c == '[' || c == ']').to_string();
        }
        if offset <= end {
            let name = trimmed.split('=').next().unwrap_or("").trim();
            if trimmed.starts_with('[') || name.is_empty() {
                return Some(table);
            }
            return Some(if table.is_empty() { name.into() } else { format!("{table}.{name}") });
        }
        pos = end + 1;
    }
    None
}

impl Config {
    /// Validates every field and cross-field relation and fills in every default.
    pub fn resolve(&self) -> Result<Resolved, ConfigError> {
        let mut c = self.clone();
        validate_run(&c.run)?;
        let preset = presets::preset(&c.device.preset).ok_or_else(|| {
            ConfigError::new(
                "device.preset",
                format!(
                    "unknown preset {:?}; expected one of {}",
                    c.device.preset,
                    presets::preset_names().join(", ")
                ),
            )
        })?;
        let mut tables = c.take_tables();
        // Block-mapped FTLs map whole logical blocks (SAST: whole groups): a logical size
        // derived from the utilization is rounded down to that granule.
        let kind = crate::ftl_kinds::of(&c.ftl)?;
        one_of(&c.ftl.gc_mode, "ftl.gc_mode", crate::ftl::spec::GC_MODES)?;
        let granule_blocks = (kind.granule_blocks)(&tables);
        let hardware = resolve_hardware(&mut c.device, preset.hardware)?;
        let geometry = resolve_geometry(&mut c.device, preset, &hardware, granule_blocks)?;
        let timing = resolve_timing(&mut c.timing, preset.timing);
        validate_timing(&timing)?;

        let ftl = (kind.resolve)(&mut c.ftl, &mut tables, &geometry, &hardware)?;
        let zones = crate::ftl::spec::resolve_zones(&mut c.ftl, &ftl, &geometry)?;
        let allocation = crate::allocation::resolve(&c.ftl.allocation, &mut tables)?;
        let scheduler = crate::engine::scheduler::resolve(&c.ftl.scheduler, &mut tables)?;
        let workload = WorkloadSpec::resolve(&mut c.workload, &mut tables, &geometry, c.run.seed)?;
        validate_serve(&c.serve)?;
        let buffer = BufferSpec::resolve(&mut c.buffer, &mut tables, &geometry)?;
        if let (Some(placement), Some(_)) = (ftl.page().map(|p| &p.placement), &buffer) {
            // The oracle foresees the host's page writes; behind a buffer the FTL sees the
            // buffer's write-backs instead (fewer, reordered, padded), whose future it does not
            // know. Found by the run_small fuzz target (the cursor passed foreseen rewrites).
            check(
                !placement.needs_future(),
                "buffer.kind",
                format!(
                    "the {} placement knows the host's future page writes, not a buffer's \
                     write-backs: use buffer.kind = \"none\" with ftl.placement = {:?}",
                    placement.name(),
                    placement.name()
                ),
            )?;
        }
        validate_ram(&mut c, &ftl, buffer.as_ref(), &geometry)?;
        let wear = WearSpec::resolve(&mut c.wear, &mut tables, preset.endurance_cycles)?;
        tables.settle(&families())?;
        c.restore_tables(tables);
        let (regions, gc_free_blocks_min) = match &ftl {
            FtlSpec::Page(p) => (p.placement.regions(), p.gc_free_blocks_min),
            FtlSpec::Hybrid(_) => (1, 0),
        };
        if c.run.timing == RunTiming::Off {
            check_counts_only(&ftl, allocation.as_ref(), &hardware)?;
        }
        Ok(Resolved {
            config: c,
            geometry,
            hardware,
            timing,
            allocation,
            scheduler,
            regions,
            gc_free_blocks_min,
            ftl,
            zones,
            buffer,
            wear,
            workload,
            served: false,
        })
    }
}

/// What sizes a device: its effective page and block, its planes and the FTL's mapping granule.
struct Sizing {
    page_size_bytes: u64,
    pages_per_block: u32,
    planes: u64,
    granule_blocks: u64,
}

impl Sizing {
    /// The (effective) block count and logical pages from two of `device.blocks`,
    /// `device.logical_bytes` and `device.utilization` (or the preset's blocks).
    fn blocks_and_logical_pages(
        &self,
        d: &DeviceConfig,
        hardware: &Hardware,
        preset: &presets::Preset,
    ) -> Result<(u32, u64), ConfigError> {
        let Self { page_size_bytes, pages_per_block, planes, granule_blocks } = *self;
        let cpg = hardware.channels_per_gang;
        // `device.blocks` counts flash blocks; the FTL's blocks are effective blocks (one flash
        // block on each channel of a gang), and every plane holds as many.
        let row = hardware.flash_blocks_per_block_row();
        let given_blocks = match d.blocks {
            Some(b) => {
                check(
                    u64::from(b).is_multiple_of(row),
                    "device.blocks",
                    format!(
                        "{b} flash blocks do not spread evenly over the hardware: it must be a \
                         multiple of channels_per_gang x planes ({cpg} x {planes} = {row}, one \
                         block on every channel of every plane); {} or {} would do",
                        (u64::from(b) / row).max(1) * row,
                        (u64::from(b) / row + 1) * row
                    ),
                )?;
                Some((u64::from(b) / u64::from(cpg)) as u32)
            }
            None => None,
        };
        let (blocks, logical_pages) = match (given_blocks, d.logical_bytes, d.utilization) {
            (Some(b), Some(lb), Some(u)) => {
                // Over-determined: accepted only when consistent, which is what a resolved
                // config (every result records one) looks like, so results re-run as they are.
                let lp = lb.div_ceil(page_size_bytes);
                let exact = lp as f64 / (f64::from(b) * f64::from(pages_per_block));
                if (exact - u).abs() > 1e-9 {
                    return Err(ConfigError::new(
                        "device.utilization",
                        format!(
                            "device.blocks, device.logical_bytes and device.utilization \
                             over-determine the device and disagree (those blocks and bytes give \
                             utilization {exact:.6}): set two of them"
                        ),
                    ));
                }
                (b, lp)
            }
            (Some(b), Some(lb), None) => (b, lb.div_ceil(page_size_bytes)),
            (b, Some(lb), u) => {
                let lp = lb.div_ceil(page_size_bytes);
                let u = u.unwrap_or(UTILIZATION_DEFAULT);
                let pages = (lp as f64 / u).ceil() as u64;
                // Rounded up to whole rows of planes.
                let rows = pages.div_ceil(u64::from(pages_per_block)).div_ceil(planes);
                let blocks = b.map_or_else(|| u32::try_from(rows * planes), Ok);
                let blocks = blocks
                    .ok()
                    .filter(|&eb| u64::from(eb) * u64::from(cpg) <= u64::from(u32::MAX))
                    .ok_or_else(|| {
                        ConfigError::new(
                            "device.logical_bytes",
                            "device too large (over 2^32 blocks)",
                        )
                    })?;
                (blocks, lp)
            }
            (b, None, u) => {
                // The preset's blocks, rounded down to whole rows of planes (at least one).
                let preset_blocks = || ((u64::from(preset.blocks) / row).max(1) * planes) as u32;
                let blocks = b.unwrap_or_else(preset_blocks);
                let u = u.unwrap_or(UTILIZATION_DEFAULT);
                let physical = u64::from(blocks) * u64::from(pages_per_block);
                let lp = (physical as f64 * u).floor() as u64;
                let granule = granule_blocks * u64::from(pages_per_block);
                (blocks, if granule > 0 && lp >= granule { lp - lp % granule } else { lp })
            }
        };
        Ok((blocks, logical_pages))
    }
}

/// `[device]` resolved into the FTL's geometry on `hardware`: the preset's page and block sizes
/// unless given, the block count and logical size from two of `device.blocks`,
/// `device.logical_bytes` and `device.utilization` (a size derived from the utilization rounded
/// down to `granule_blocks` logical blocks: block-mapped FTLs map whole blocks), the derived
/// keys recorded.
fn resolve_geometry(
    d: &mut DeviceConfig,
    preset: &presets::Preset,
    hardware: &Hardware,
    granule_blocks: u64,
) -> Result<Geometry, ConfigError> {
    let flash_page_bytes = *d.page_size_bytes.get_or_insert(preset.page_size_bytes);
    let pages_per_block = *d.pages_per_block.get_or_insert(preset.pages_per_block);
    check(d.sector_size_bytes >= 1, "device.sector_size_bytes", "must be at least 1")?;
    check(
        flash_page_bytes >= d.sector_size_bytes
            && flash_page_bytes.is_multiple_of(d.sector_size_bytes),
        "device.page_size_bytes",
        format!("must be a positive multiple of the sector size {}", d.sector_size_bytes),
    )?;
    check(
        flash_page_bytes <= MAX_PAGE_SIZE_BYTES,
        "device.page_size_bytes",
        format!(
            "must be at most {MAX_PAGE_SIZE_BYTES} bytes (1 MiB: flash pages are 512 B to \
             64 KiB, an effective page striped over a gang a few hundred KiB)"
        ),
    )?;
    // The FTL's page is the effective page: a flash page on each of the gang's channels.
    let cpg = hardware.channels_per_gang;
    let page_size_bytes = flash_page_bytes.saturating_mul(u64::from(cpg));
    check(
        page_size_bytes <= MAX_PAGE_SIZE_BYTES,
        "device.channels_per_gang",
        format!(
            "{cpg} channels per gang stripe {flash_page_bytes}-byte flash pages into a \
             {page_size_bytes}-byte effective page, more than the {MAX_PAGE_SIZE_BYTES}-byte \
             limit"
        ),
    )?;
    check(
        (2..=32_768).contains(&pages_per_block),
        "device.pages_per_block",
        "must be between 2 and 32768",
    )?;
    if let Some(u) = d.utilization {
        check(u > 0.0 && u < 1.0, "device.utilization", "must be in (0, 1)")?;
    }
    let planes = u64::from(hardware.planes());
    let size = Sizing { page_size_bytes, pages_per_block, planes, granule_blocks };
    let (blocks, logical_pages) = size.blocks_and_logical_pages(d, hardware, preset)?;
    debug_assert!(u64::from(blocks).is_multiple_of(planes));
    d.blocks = Some(blocks * cpg);
    let geometry = Geometry {
        page_size_bytes,
        pages_per_block,
        blocks,
        logical_pages,
        sector_size_bytes: d.sector_size_bytes,
    };
    d.utilization = Some(geometry.utilization());
    d.logical_bytes = Some(geometry.logical_bytes());
    check(blocks >= 4, "device.blocks", "must be at least 4 (effective) blocks")?;
    check(logical_pages >= 1, "device.logical_bytes", "the device has no logical pages")?;
    check(
        geometry.physical_pages() < u64::from(u32::MAX),
        "device.blocks",
        "more than 2^32 - 1 physical pages are not supported",
    )?;
    Ok(geometry)
}

const RAM_BYTES_MIN_DEFAULT: u64 = 64 << 20;

/// `device.ram_bytes` (default a quarter of the flash's bytes, at least 64 MiB): the RAM region
/// and the buffer must fit in it together.
fn validate_ram(
    c: &mut Config,
    ftl: &FtlSpec,
    buffer: Option<&BufferSpec>,
    g: &Geometry,
) -> Result<(), ConfigError> {
    let placement = ftl.page().map(|p| p.placement.as_ref());
    let region_bytes = placement.map_or(0, PlacementSpec::ram_region_bytes);
    let region_key = placement.map_or("", PlacementSpec::ram_region_key);
    if region_bytes > 0 {
        check(
            region_bytes >= g.page_size_bytes,
            region_key,
            format!("{region_bytes} bytes hold no page of {} bytes", g.page_size_bytes),
        )?;
        check(
            g.physical_pages() + region_bytes / g.page_size_bytes < u64::from(u32::MAX) / 2,
            region_key,
            "the flash pages and the RAM region's pages together must stay below 2^31",
        )?;
    }
    let physical_bytes = g.physical_pages() * g.page_size_bytes;
    let budget = *c.device.ram_bytes.get_or_insert((physical_bytes / 4).max(RAM_BYTES_MIN_DEFAULT));
    let buffer = buffer.map_or(0, |_| c.buffer.size_bytes.unwrap_or(0));
    if region_bytes + buffer > budget {
        let key = if region_bytes > 0 { region_key } else { "buffer.size_bytes" };
        let what = match (region_bytes > 0, buffer > 0) {
            (true, true) => format!(
                "the RAM region ({region_bytes} bytes) and the buffer ({buffer} bytes) need {} \
                 bytes of RAM together",
                region_bytes + buffer
            ),
            (true, false) => format!("the RAM region needs {region_bytes} bytes of RAM"),
            _ => format!("the buffer needs {buffer} bytes of RAM"),
        };
        return Err(ConfigError::new(
            key,
            format!(
                "{what}, more than the device's RAM budget device.ram_bytes = {budget}; shrink \
                 it or raise device.ram_bytes"
            ),
        ));
    }
    Ok(())
}

fn validate_serve(sv: &ServeConfig) -> Result<(), ConfigError> {
    one_of(&sv.store, "serve.store", &["full", "metadata-only"])?;
    one_of(&sv.recovery, "serve.recovery", &["scan", "checkpoint"])?;
    one_of(&sv.ram_region_battery, "serve.ram_region_battery", &["ok", "failed"])?;
    check(
        sv.stats_interval_s.is_finite() && sv.stats_interval_s > 0.0,
        "serve.stats_interval_s",
        "must be > 0",
    )?;
    check(
        sv.checkpoint_interval_s.is_finite() && sv.checkpoint_interval_s > 0.0,
        "serve.checkpoint_interval_s",
        "must be > 0",
    )
}

/// `device.gangs` ... `device.planes_per_die`: the preset's unless given; each at least 1, and
/// the device at most `HARDWARE_UNITS_MAX` planes.
fn resolve_hardware(d: &mut DeviceConfig, p: Hardware) -> Result<Hardware, ConfigError> {
    let hw = Hardware {
        gangs: *d.gangs.get_or_insert(p.gangs),
        channels_per_gang: *d.channels_per_gang.get_or_insert(p.channels_per_gang),
        chips_per_channel: *d.chips_per_channel.get_or_insert(p.chips_per_channel),
        dies_per_chip: *d.dies_per_chip.get_or_insert(p.dies_per_chip),
        planes_per_die: *d.planes_per_die.get_or_insert(p.planes_per_die),
    };
    for (key, n) in hw.levels() {
        check(
            (1..=HARDWARE_LEVEL_MAX).contains(&n),
            key,
            format!("must be between 1 and {HARDWARE_LEVEL_MAX}"),
        )?;
    }
    check(
        hw.planes_per_die <= 64,
        "device.planes_per_die",
        "must be at most 64 (a multi-plane operation spans at most 64 planes)",
    )?;
    let planes = u64::from(hw.gangs)
        * u64::from(hw.chips_per_channel)
        * u64::from(hw.dies_per_chip)
        * u64::from(hw.planes_per_die);
    check(
        planes <= u64::from(HARDWARE_UNITS_MAX)
            && planes * u64::from(hw.channels_per_gang) <= 1 << 24,
        "device.gangs",
        format!(
            "gangs x chips_per_channel x dies_per_chip x planes_per_die = {planes} planes: at \
             most {HARDWARE_UNITS_MAX}"
        ),
    )?;
    Ok(hw)
}

fn resolve_timing(t: &mut TimingConfig, p: Timing) -> Timing {
    let copy = t.copy_page_ns.or(p.copy_page_ns).filter(|&ns| ns > 0);
    let timing = Timing {
        read_page_ns: *t.read_page_ns.get_or_insert(p.read_page_ns),
        program_page_ns: *t.program_page_ns.get_or_insert(p.program_page_ns),
        erase_block_ns: *t.erase_block_ns.get_or_insert(p.erase_block_ns),
        transfer_page_ns: *t.transfer_page_ns.get_or_insert(p.transfer_page_ns),
        copy_page_ns: copy,
        ram_page_ns: *t.ram_page_ns.get_or_insert(p.ram_page_ns),
        command_ns: *t.command_ns.get_or_insert(p.command_ns),
    };
    t.copy_page_ns = Some(copy.unwrap_or(0));
    timing
}

/// A TOML syntax error as "line L, column C: what" (the parser's message with the position
/// of its span in `text`).
#[must_use]
pub fn toml_error_message(text: &str, e: &toml::de::Error) -> String {
    let Some(span) = e.span() else { return e.message().to_string() };
    let mut end = span.start.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {column}: {}", e.message())
}

/// Largest page a device may have: a bound a real device is far inside, and that keeps
/// per-page scratch buffers small.
pub const MAX_PAGE_SIZE_BYTES: u64 = 1 << 20;

/// Longest flash or RAM operation accepted, 10 s (a NOR segment erase, the slowest operation of
/// the presets, takes under 1 s): with simulated time in u64 nanoseconds (584 years), a run
/// would need over 10^9 operations at this bound to overflow, and the device checks that too.
pub const MAX_OPERATION_NS: u64 = 10_000_000_000;

fn validate_timing(t: &Timing) -> Result<(), ConfigError> {
    let ops = [
        ("timing.read_page_ns", t.read_page_ns),
        ("timing.program_page_ns", t.program_page_ns),
        ("timing.erase_block_ns", t.erase_block_ns),
        ("timing.transfer_page_ns", t.transfer_page_ns),
        ("timing.copy_page_ns", t.copy_page_ns.unwrap_or(0)),
        ("timing.ram_page_ns", t.ram_page_ns),
        ("timing.command_ns", t.command_ns),
    ];
    for (key, ns) in ops {
        check(
            ns <= MAX_OPERATION_NS,
            key,
            format!(
                "{ns} ns is longer than any flash operation: at most {MAX_OPERATION_NS} (10 s)"
            ),
        )?;
    }
    Ok(())
}

/// `run.timing = "off"` counts without a clock: refused for every part whose decisions read
/// the time (docs/ALGORITHMS.md "Counts only"), naming the key that chose it, because its counts
/// would silently differ from a timed run's.
fn check_counts_only(
    ftl: &FtlSpec,
    allocation: &dyn AllocationSpec,
    hardware: &Hardware,
) -> Result<(), ConfigError> {
    let refuse = |key: &str, what: String| {
        Err(ConfigError::new(
            key,
            format!(
                "{what} reads the simulated time, which run.timing = \"off\" does not keep: \
                 its counts would differ from a timed run's. Use run.timing = \"on\" or \
                 change {key}"
            ),
        ))
    };
    if let FtlSpec::Page(p) = ftl {
        if p.cleaning.reads_time() {
            return refuse("ftl.cleaning", format!("cleaning policy {:?}", p.cleaning.name()));
        }
        if p.placement.reads_time() {
            return refuse("ftl.placement", format!("placement {:?}", p.placement.name()));
        }
        if p.gc_background_free_blocks.is_some() {
            return refuse(
                "ftl.gc_mode",
                "background cleaning (it runs when the device idles)".into(),
            );
        }
    }
    if hardware.planes() > 1 && allocation.reads_time() {
        return refuse(
            "ftl.allocation",
            format!("plane allocation {:?} (it picks the least busy plane)", allocation.name()),
        );
    }
    Ok(())
}

/// `[run]`: a sampling interval, when given, is positive (0 would sample on every byte; leave
/// the key unset for no sampling).
fn validate_run(r: &RunConfig) -> Result<(), ConfigError> {
    if let Some(b) = r.sample_every_bytes {
        check(b > 0, "run.sample_every_bytes", "must be > 0 (leave it unset for no sampling)")?;
    }
    if let Some(b) = r.memory_limit_bytes {
        check(
            b > 0,
            "run.memory_limit_bytes",
            "must be > 0 (leave it unset to use the machine's)",
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(overrides: &[&str]) -> Result<Resolved, ConfigError> {
        Config::from_overrides(overrides)?.resolve()
    }

    #[test]
    fn defaults_resolve() {
        let r = resolve(&[]).unwrap();
        assert_eq!(r.geometry.blocks, 4096);
        assert_eq!(r.geometry.pages_per_block, 64);
        assert_eq!(r.geometry.logical_pages, (4096.0 * 64.0 * 0.8f64).floor() as u64);
        assert_eq!(r.regions, 1);
        assert_eq!(r.gc_free_blocks_min, 2);
        let r = resolve(&["ftl.placement=dac", "ftl.time_threshold_s=60"]).unwrap();
        assert_eq!(r.gc_free_blocks_min, 3);
        let r = resolve(&["ftl.placement=oracle", "ftl.regions=4"]).unwrap();
        assert_eq!(r.gc_free_blocks_min, 5);
        let e = resolve(&["ftl.placement=oracle", "ftl.gc_free_blocks_min=2"]).unwrap_err();
        assert_eq!(e.key, "ftl.gc_free_blocks_min");
    }

    #[test]
    fn overrides_keep_types() {
        let r = resolve(&["device.utilization=0.9", "ftl.placement=dac", "run.seed=7"]).unwrap();
        assert_eq!(r.regions, 4);
        assert_eq!(r.config.run.seed, 7);
        assert!((r.geometry.utilization() - 0.9).abs() < 1e-5);
    }

    #[test]
    fn errors_name_the_key() {
        let e = resolve(&["ftl.cleaning=lru"]).unwrap_err();
        assert_eq!(e.key, "ftl.cleaning");
        let e = resolve(&["device.utilization=1.5"]).unwrap_err();
        assert_eq!(e.key, "device.utilization");
        let e = resolve(&["device.bogus=1"]).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = resolve(&["device.utilization=0.9995"]).unwrap_err();
        assert_eq!(e.key, "device.utilization");
        let e = resolve(&["ftl.regions=3"]).unwrap_err();
        assert_eq!(e.key, "ftl.regions");
        let e = resolve(&["device.page_size_bytes=1000"]).unwrap_err();
        assert_eq!(e.key, "device.page_size_bytes");
        let e = resolve(&["workload.kind=trace"]).unwrap_err();
        assert_eq!(e.key, "workload.path");
    }

    #[test]
    fn a_resolved_config_resolves_to_itself() {
        let r = resolve(&["device.utilization=0.85", "ftl.placement=oracle"]).unwrap();
        let again = r.config.resolve().unwrap();
        assert_eq!(again.config, r.config);
        assert_eq!(again.geometry, r.geometry);
        let e = resolve(&[
            "device.blocks=64",
            "device.logical_bytes=1048576",
            "device.utilization=0.5",
        ])
        .unwrap_err();
        assert_eq!(e.key, "device.utilization");
    }

    #[test]
    fn logical_bytes_sizes_the_device() {
        let r = resolve(&["device.logical_bytes=104857600", "device.utilization=0.5"]).unwrap();
        assert_eq!(r.geometry.logical_pages, 25_600);
        assert_eq!(r.geometry.blocks, 800);
    }

    #[test]
    fn oracle_default_boundaries() {
        let r = resolve(&["ftl.placement=oracle", "ftl.regions=4"]).unwrap();
        let passes = |r: &Resolved| -> Vec<f64> {
            r.config.value("ftl.oracle_boundaries_passes").unwrap().try_into().unwrap()
        };
        assert_eq!(passes(&r), vec![0.25, 1.0, 4.0]);
        let r = resolve(&["ftl.placement=oracle"]).unwrap();
        assert_eq!(passes(&r), vec![1.0]);
    }

    #[test]
    fn oracle_segments_layout() {
        let r = resolve(&["ftl.placement=oracle", "ftl.regions=6", "ftl.oracle_bands=segments"])
            .unwrap();
        assert_eq!(r.config.value("ftl.oracle_bands"), Some(toml::Value::from("segments")));
        assert_eq!(r.config.value("ftl.oracle_boundaries_passes"), None);
        let e = resolve(&[
            "ftl.placement=oracle",
            "ftl.oracle_bands=segments",
            "ftl.oracle_boundaries_passes=[0.5]",
        ])
        .unwrap_err();
        assert!(e.to_string().contains("ftl.oracle_boundaries_passes"), "{e}");
        let e = resolve(&["ftl.placement=oracle", "ftl.oracle_bands=fk"]).unwrap_err();
        assert!(e.to_string().contains("ftl.oracle_bands"), "{e}");
        // The default layout is left out of configurations, so existing results stay identical.
        let r = resolve(&["ftl.placement=oracle"]).unwrap();
        assert_eq!(r.config.value("ftl.oracle_bands"), None);
    }

    #[test]
    fn json_config() {
        let c = Config::from_json(r#"{"device": {"blocks": 64, "utilization": null}}"#).unwrap();
        assert_eq!(c.device.blocks, Some(64));
        let e = Config::from_json(r#"{"ftl": {"nope": 1}}"#).unwrap_err();
        assert!(e.to_string().contains("nope"));
    }
}
