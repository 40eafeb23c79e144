//! What every policy family's typed spec is made of: small validation helpers that name the
//! dotted key at fault, registry lookup by name, and `ExtraKeys`, the keys of a table that no
//! typed field declares — the parameters of policies added after the table's shape was fixed.
//!
//! A leaf module: it knows no policy and no configuration. Each family (`ftl`, `gc`,
//! `placement`, `buffer`, `wear`, `workload`) owns its raw TOML table, its registry, its
//! validation and defaults and how it builds itself; `config` only reads files and overrides and
//! dispatches to them.

use std::collections::{BTreeMap, BTreeSet};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::ConfigError;

/// `Ok` when `cond` holds, else an error naming `key`.
pub fn check(cond: bool, key: &str, message: impl Into<String>) -> Result<(), ConfigError> {
    if cond {
        Ok(())
    } else {
        Err(ConfigError::new(key, message))
    }
}

/// `value` is one of `allowed`.
pub fn one_of(value: &str, key: &str, allowed: &[&str]) -> Result<(), ConfigError> {
    check(
        allowed.contains(&value),
        key,
        format!("unknown value {value:?}; expected one of {}", allowed.join(", ")),
    )
}

/// A fraction in (0, 1) (`open`) or [0, 1].
pub fn fraction(v: f64, key: &str, open: bool) -> Result<(), ConfigError> {
    let ok = if open { v > 0.0 && v < 1.0 } else { (0.0..=1.0).contains(&v) };
    check(ok, key, if open { "must be in (0, 1)" } else { "must be in [0, 1]" })
}

/// A registry entry: something with a name a config value selects.
pub trait Named {
    fn name(&self) -> &'static str;
    /// The parameters the entry declares (none by default): read through `Params` when it is
    /// chosen, recorded per `Unchosen` when it is not.
    fn params(&self) -> &'static [Param] {
        &[]
    }
}

/// The entry of `registry` named `name`, if any.
#[must_use]
pub fn find<'a, E: Named>(registry: &'a [E], name: &str) -> Option<&'a E> {
    registry.iter().find(|e| e.name() == name)
}

/// The entry of `registry` named `value` (the value of `key`), or an error listing the names.
pub fn lookup<'a, E: Named>(
    registry: &'a [E],
    value: &str,
    key: &str,
) -> Result<&'a E, ConfigError> {
    registry.iter().find(|e| e.name() == value).ok_or_else(|| {
        let names: Vec<&str> = registry.iter().map(Named::name).collect();
        ConfigError::new(
            key,
            format!("unknown value {value:?}; expected one of {}", names.join(", ")),
        )
    })
}

/// `lookup` for a family whose value `none` means "no policy" (`Ok(None)`); the error lists
/// `none` first.
pub fn lookup_or_none<'a, E: Named>(
    registry: &'a [E],
    value: &str,
    key: &str,
    none: &str,
) -> Result<Option<&'a E>, ConfigError> {
    if value == none {
        return Ok(None);
    }
    find(registry, value).map(Some).ok_or_else(|| {
        let names: Vec<&str> =
            std::iter::once(none).chain(registry.iter().map(|e| -> &str { e.name() })).collect();
        ConfigError::new(
            key,
            format!("unknown value {value:?}; expected one of {}", names.join(", ")),
        )
    })
}

/// The names of a registry, in order.
#[must_use]
pub fn names<E: Named>(registry: &[E]) -> Vec<&'static str> {
    registry.iter().map(Named::name).collect()
}

// ---- policy parameters ----------------------------------------------------------------------

/// A parameter's value: JSON's data model, which a TOML value fits into and which keeps the
/// unset (`null`) fields of a structured parameter (a phase list, a volume table), so results
/// record every field as the typed tables do.
pub type Value = serde_json::Value;

/// The keys of a table that no typed field of its family declares: the parameters policies
/// declare (`Param`). `None` (or `null` inside a structured value): declared but unset — a
/// resolved config records it (JSON results show `null`; TOML leaves it out, so a configuration
/// read back from its TOML equals the one written: equality ignores unset keys and fields).
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(transparent)]
pub struct ExtraKeys(BTreeMap<String, Option<Value>>);

impl ExtraKeys {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The keys that hold a value, nulls inside it dropped.
    fn set(&self) -> impl Iterator<Item = (&String, Value)> + '_ {
        self.0.iter().filter_map(|(k, v)| v.as_ref().map(|v| (k, without_nulls(v))))
    }
}

/// Whether two values are the same parameter value (an integer equals the same float: TOML
/// and JSON write `1` and `1.0` for one number).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => without_nulls(a) == without_nulls(b),
    }
}

/// `v` with every `null` field of its tables removed (how TOML holds it).
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

impl PartialEq for ExtraKeys {
    fn eq(&self, other: &Self) -> bool {
        self.set().eq(other.set())
    }
}

/// Serialized with each `null` as "none": JSON writes `null`, TOML leaves the key out.
struct Nullable<'a>(&'a Value);

impl Serialize for Nullable<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Null => s.serialize_none(),
            Value::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, &Nullable(v))?;
                }
                map.end()
            }
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(&Nullable(v))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

impl Serialize for ExtraKeys {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, &v.as_ref().map(Nullable))?;
        }
        map.end()
    }
}

impl std::ops::Deref for ExtraKeys {
    type Target = BTreeMap<String, Option<Value>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for ExtraKeys {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// A parameter a policy declares in its own file: the table it lives in — its family's (`ftl`,
/// `buffer`, `wear`, `workload`) or one of the policy's own (`dac`, `deb`) — its key, and what a
/// resolved configuration records for it when another policy is chosen.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub table: &'static str,
    pub key: &'static str,
    pub unchosen: Unchosen,
}

/// What a resolved configuration records for a parameter whose policy is not chosen.
#[derive(Clone, Copy, Debug)]
pub enum Unchosen {
    /// Nothing; a value set for it is refused naming the policy that uses it.
    Unset,
    /// This value, whichever policy of the family is chosen: a key every policy's table carries
    /// (`ftl.random_d`). Another value is refused naming the policies that use it; this one is
    /// accepted, so that a resolved configuration resolves again.
    Default(fn() -> Value),
    /// Left out (not even as `null`, and its table too when it has no other key) unless a value
    /// is set or the chosen policy writes one back; a value set for it when its policy is not
    /// chosen is refused naming that policy, as for `Unset`. For parameters added
    /// after results of other configurations were published (`tests/golden/metrics/`): a
    /// configuration that does not choose the policy keeps the exact shape it had before.
    Omitted,
}

impl Param {
    /// A parameter left unset when its policy is not chosen.
    #[must_use]
    pub const fn new(table: &'static str, key: &'static str) -> Self {
        Self { table, key, unchosen: Unchosen::Unset }
    }

    /// A parameter left out of configurations that do not choose its policy (see
    /// `Unchosen::Omitted`).
    #[must_use]
    pub const fn omitted(table: &'static str, key: &'static str) -> Self {
        Self { table, key, unchosen: Unchosen::Omitted }
    }

    /// A parameter every configuration shows at `default` (see `Unchosen::Default`).
    #[must_use]
    pub const fn shown(table: &'static str, key: &'static str, default: fn() -> Value) -> Self {
        Self { table, key, unchosen: Unchosen::Default(default) }
    }
}

/// One family's declarations, for `Tables::settle` and for messages: the key that selects a
/// policy (`ftl.cleaning`) and, per registered policy, its name and parameters.
#[derive(Clone, Debug)]
pub struct Family {
    pub selector: &'static str,
    pub entries: Vec<(&'static str, &'static [Param])>,
}

impl Family {
    /// The family of a registry.
    #[must_use]
    pub fn of<E: Named>(selector: &'static str, registry: &[E]) -> Self {
        Self { selector, entries: registry.iter().map(|e| (e.name(), e.params())).collect() }
    }

    /// The policies declaring `table.key`, as `selector = "a"` or `selector = "a" or "b"`.
    fn owners(&self, table: &str, key: &str) -> Option<String> {
        let names: Vec<String> = self
            .entries
            .iter()
            .filter(|(_, params)| params.iter().any(|p| p.table == table && p.key == key))
            .map(|(name, _)| format!("{name:?}"))
            .collect();
        match names.as_slice() {
            [] => None,
            [one] => Some(format!("{} = {one}", self.selector)),
            [rest @ .., last] => Some(format!("{} = {} or {last}", self.selector, rest.join(", "))),
        }
    }
}

/// The policy tables of one configuration while it resolves — each family table's extra keys
/// and the policies' own tables, by name — and the keys the chosen policies read.
#[derive(Debug, Default)]
pub struct Tables {
    maps: BTreeMap<String, ExtraKeys>,
    claimed: BTreeSet<(String, String)>,
}

impl Tables {
    /// Adds a table's keys (a family table's extra keys, or a policy's own table).
    pub fn insert(&mut self, table: &str, keys: ExtraKeys) {
        self.maps.entry(table.to_string()).or_default().extend(keys.0);
    }

    /// Takes a table's keys back (empty if it has none).
    pub fn take(&mut self, table: &str) -> ExtraKeys {
        self.maps.remove(table).unwrap_or_default()
    }

    /// The parameters of a chosen policy, in `table` by default.
    pub fn params(&mut self, table: &'static str) -> Params<'_> {
        Params { tables: self, table }
    }

    /// The value set for `table.key`, if any (not a claim: for checks across families).
    #[must_use]
    pub fn value(&self, table: &str, key: &str) -> Option<&Value> {
        self.maps.get(table).and_then(|m| m.get(key)).and_then(Option::as_ref)
    }

    /// After every family resolved: each declared parameter no chosen policy read is recorded
    /// per its `Unchosen` (a value set for an `Unset` one is refused naming its policies), and
    /// a key no registered policy declares is refused.
    pub fn settle(&mut self, families: &[Family]) -> Result<(), ConfigError> {
        for family in families {
            for (_, params) in &family.entries {
                for p in *params {
                    let claimed = self.claimed.contains(&(p.table.to_string(), p.key.to_string()));
                    if !claimed && matches!(p.unchosen, Unchosen::Omitted) {
                        if self.value(p.table, p.key).is_some() {
                            let who = family.owners(p.table, p.key).unwrap_or_default();
                            return Err(ConfigError::new(
                                format!("{}.{}", p.table, p.key),
                                format!("only {who} uses it"),
                            ));
                        }
                        // A `null` read back from a results file is no value: dropped too.
                        if let Some(map) = self.maps.get_mut(p.table) {
                            map.remove(p.key);
                            if map.is_empty() {
                                self.maps.remove(p.table);
                            }
                        }
                        continue;
                    }
                    let map = self.maps.entry(p.table.to_string()).or_default();
                    if claimed {
                        if matches!(p.unchosen, Unchosen::Omitted)
                            && map.get(p.key).is_none_or(Option::is_none)
                        {
                            // Read by the chosen policy but left unset: left out too, so that
                            // a parameter added to a policy keeps its old results' shape.
                            map.remove(p.key);
                            if map.is_empty() {
                                self.maps.remove(p.table);
                            }
                            continue;
                        }
                        // Read by the chosen policy; left unset, it is still recorded.
                        map.entry(p.key.to_string()).or_insert(None);
                        continue;
                    }
                    let set = map.get(p.key).is_some_and(Option::is_some);
                    match p.unchosen {
                        Unchosen::Unset if set => {
                            let who = family.owners(p.table, p.key).unwrap_or_default();
                            return Err(ConfigError::new(
                                format!("{}.{}", p.table, p.key),
                                format!("only {who} uses it"),
                            ));
                        }
                        Unchosen::Unset => {
                            map.insert(p.key.to_string(), None);
                        }
                        Unchosen::Omitted => unreachable!("left out above"),
                        Unchosen::Default(default) => {
                            let value = map.get(p.key).cloned().flatten();
                            if value.as_ref().is_some_and(|v| !same_value(v, &default())) {
                                let who = family.owners(p.table, p.key).unwrap_or_default();
                                return Err(ConfigError::new(
                                    format!("{}.{}", p.table, p.key),
                                    format!("only {who} uses it"),
                                ));
                            }
                            map.insert(p.key.to_string(), Some(default()));
                        }
                    }
                }
            }
        }
        refuse_undeclared(&self.maps, families)
    }

    /// The tables, each with every declared key (after `settle`).
    #[must_use]
    pub fn into_maps(self) -> BTreeMap<String, ExtraKeys> {
        self.maps
    }
}

/// Refuses a key of `maps` that no policy of `families` declares (a typo, or a parameter of no
/// registered policy), naming it and its table.
pub fn refuse_undeclared(
    maps: &BTreeMap<String, ExtraKeys>,
    families: &[Family],
) -> Result<(), ConfigError> {
    let declared = |table: &str, key: &str| {
        families.iter().any(|f| {
            f.entries.iter().any(|(_, ps)| ps.iter().any(|p| p.table == table && p.key == key))
        })
    };
    for (table, keys) in maps {
        if let Some(key) = keys.keys().find(|k| !declared(table, k)) {
            return Err(ConfigError::new(
                format!("{table}.{key}"),
                format!("unknown field `{key}` in [{table}]"),
            ));
        }
    }
    Ok(())
}

/// The TOML name of a value's type, for messages.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "float",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "table",
    }
}

/// The parameters of a chosen policy: typed reads of its keys (each read claims the key), with
/// defaults written back so the resolved config records them.
pub struct Params<'a> {
    tables: &'a mut Tables,
    table: &'static str,
}

impl Params<'_> {
    fn dotted(&self, key: &str) -> String {
        format!("{}.{key}", self.table)
    }

    fn claim(&mut self, key: &str) -> Option<Value> {
        self.tables.claimed.insert((self.table.to_string(), key.to_string()));
        self.tables.maps.get(self.table).and_then(|m| m.get(key)).cloned().flatten()
    }

    /// The same policy's parameters in another table (e.g. DAC's `[dac]`).
    pub fn table(&mut self, table: &'static str) -> Params<'_> {
        Params { tables: self.tables, table }
    }

    /// `key`'s value if set, of any type serde can read from TOML (numbers, booleans, strings,
    /// lists, tables); not written back.
    pub fn get<T: DeserializeOwned>(&mut self, key: &str) -> Result<Option<T>, ConfigError> {
        let Some(v) = self.claim(key) else { return Ok(None) };
        serde_json::from_value(v).map(Some).map_err(|e| {
            let message = e.to_string();
            // A structured parameter's unknown field is named by its own dotted key.
            let field = message
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
                .map(|f| format!("{}.{f}", self.dotted(key)));
            ConfigError::new(field.unwrap_or_else(|| self.dotted(key)), message)
        })
    }

    /// `key`'s value, `default` when unset; written back.
    pub fn or<T: DeserializeOwned + Serialize>(
        &mut self,
        key: &str,
        default: T,
    ) -> Result<T, ConfigError> {
        let v = self.get(key)?.unwrap_or(default);
        self.set(key, &v);
        Ok(v)
    }

    /// Records `value` for `key` (a value the policy derived or normalised).
    pub fn set<T: Serialize>(&mut self, key: &str, value: &T) {
        self.tables.claimed.insert((self.table.to_string(), key.to_string()));
        let v = serde_json::to_value(value).ok();
        self.tables.maps.entry(self.table.to_string()).or_default().insert(key.to_string(), v);
    }

    /// A float parameter (an integer value is accepted), `default` when unset; written back.
    pub fn f64(&mut self, key: &str, default: f64) -> Result<f64, ConfigError> {
        let v = match self.claim(key) {
            None => default,
            Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            Some(other) => {
                return Err(ConfigError::new(
                    self.dotted(key),
                    format!("must be a number, not {}", type_name(&other)),
                ))
            }
        };
        check(v.is_finite(), &self.dotted(key), "must be a finite number")?;
        self.set(key, &v);
        Ok(v)
    }

    /// A `u32` parameter, `default` when unset; written back.
    pub fn u32(&mut self, key: &str, default: u32) -> Result<u32, ConfigError> {
        let v = self.u64(key, u64::from(default))?;
        u32::try_from(v).map_err(|_| {
            ConfigError::new(self.dotted(key), format!("must be at most {}", u32::MAX))
        })
    }

    /// A non-negative integer parameter, `default` when unset; written back.
    pub fn u64(&mut self, key: &str, default: u64) -> Result<u64, ConfigError> {
        let v = match self.claim(key) {
            None => default,
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.as_u64().ok_or_else(|| {
                ConfigError::new(self.dotted(key), "must be a non-negative integer")
            })?,
            Some(other) => {
                return Err(ConfigError::new(
                    self.dotted(key),
                    format!("must be an integer, not {}", type_name(&other)),
                ))
            }
        };
        let stored = i64::try_from(v)
            .map_err(|_| ConfigError::new(self.dotted(key), "integer too large"))?;
        self.tables
            .maps
            .entry(self.table.to_string())
            .or_default()
            .insert(key.to_string(), Some(Value::from(stored)));
        Ok(v)
    }
}

/// Declares a family's policy modules and its `REGISTRY` of their `ENTRY`s in one list, so
/// adding a policy is one new file plus one line here:
///
/// ```ignore
/// crate::spec::registry! {
///     CleaningEntry;
///     greedy,
///     cost_benefit,
/// }
/// ```
///
/// expands to `mod greedy; mod cost_benefit;` and `pub const REGISTRY: &[CleaningEntry] =
/// &[greedy::ENTRY, cost_benefit::ENTRY];` (a module may be marked `pub`).
macro_rules! registry {
    ($entry:ty; $($vis:vis $module:ident),+ $(,)?) => {
        $($vis mod $module;)+
        /// The registry, in the order names are listed in messages.
        pub const REGISTRY: &[$entry] = &[$($module::ENTRY),+];
    };
}
pub(crate) use registry;
