//! What every policy family's typed spec is made of: small validation helpers that name the
//! dotted key at fault, registry lookup by name, and `ExtraKeys`, the keys of a table that no
//! typed field declares — the parameters of policies added after the table's shape was fixed.
//!
//! A leaf module: it knows no policy and no configuration. Each family (`ftl`, `gc`,
//! `placement`, `buffer`, `wear`, `workload`) owns its raw TOML table, its registry, its
//! validation and defaults and how it builds itself; `config` only reads files and overrides and
//! dispatches to them.

use std::collections::BTreeMap;

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
    /// Keys of its table the entry reads through `Params` (none by default).
    fn extra_keys(&self) -> &'static [&'static str] {
        &[]
    }
}

/// The entry of `registry` named `name`, if any.
#[must_use]
pub fn find<'a, E: Named>(registry: &'a [E], name: &str) -> Option<&'a E> {
    registry.iter().find(|e| e.name() == name)
}

/// The entry of `registry` that takes extra key `key`, as `selector = "name"` (for messages).
#[must_use]
pub fn owner_of<E: Named>(registry: &[E], key: &str, selector: &str) -> Option<String> {
    registry
        .iter()
        .find(|e| e.extra_keys().contains(&key))
        .map(|e| format!("{selector} = {:?}", e.name()))
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

/// Keys of a table that its typed fields do not declare (`#[serde(flatten)]`), kept as TOML
/// values. A policy added later reads its parameters here (`f64`, `u64`, ...), which also
/// writes the default back so the resolved config records it; the dispatcher refuses every key
/// no selected policy claimed. `table` is the dotted table name used in error messages.
pub type ExtraKeys = BTreeMap<String, toml::Value>;

/// A typed view of `ExtraKeys` for one policy's parameters.
pub struct Params<'a> {
    pub table: &'static str,
    pub keys: &'a mut ExtraKeys,
}

impl Params<'_> {
    fn key(&self, name: &str) -> String {
        format!("{}.{name}", self.table)
    }

    /// A float parameter (an integer value is accepted), `default` when unset; the value is
    /// written back.
    pub fn f64(&mut self, name: &str, default: f64) -> Result<f64, ConfigError> {
        let v = match self.keys.get(name) {
            None => default,
            Some(toml::Value::Float(f)) => *f,
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(other) => {
                return Err(ConfigError::new(
                    self.key(name),
                    format!("must be a number, not {}", other.type_str()),
                ))
            }
        };
        check(v.is_finite(), &self.key(name), "must be a finite number")?;
        self.keys.insert(name.to_string(), toml::Value::Float(v));
        Ok(v)
    }

    /// A non-negative integer parameter, `default` when unset; the value is written back.
    pub fn u64(&mut self, name: &str, default: u64) -> Result<u64, ConfigError> {
        let v = match self.keys.get(name) {
            None => default,
            Some(toml::Value::Integer(i)) => u64::try_from(*i)
                .map_err(|_| ConfigError::new(self.key(name), "must be a non-negative integer"))?,
            Some(other) => {
                return Err(ConfigError::new(
                    self.key(name),
                    format!("must be an integer, not {}", other.type_str()),
                ))
            }
        };
        let stored =
            i64::try_from(v).map_err(|_| ConfigError::new(self.key(name), "integer too large"))?;
        self.keys.insert(name.to_string(), toml::Value::Integer(stored));
        Ok(v)
    }
}

/// Refuses the extra keys of `table` that no selected policy claimed. `owner` names the
/// registered policy that would use a key (for a helpful message), if any.
pub fn refuse_unclaimed(
    table: &str,
    keys: &ExtraKeys,
    claimed: &[&str],
    owner: impl Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    for key in keys.keys() {
        if claimed.contains(&key.as_str()) {
            continue;
        }
        let dotted = format!("{table}.{key}");
        return Err(match owner(key) {
            Some(who) => ConfigError::new(dotted, format!("only {who} uses it")),
            None => ConfigError::new(dotted, format!("unknown field `{key}` in [{table}]")),
        });
    }
    Ok(())
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
