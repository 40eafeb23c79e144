//! Recovery of the hybrid FTLs (BAST, SAST, FAST) from what the flash holds: see
//! `recover_from_config`.

use super::HybridFtl;
use crate::config::Resolved;
use crate::error::{ConfigError, RecoveryError};
use crate::flash::Flash;
use crate::ftl::FtlRecovery;

/// Rebuilds a hybrid FTL's tables from the flash a resolved config describes.
pub fn recover_from_config(
    r: &Resolved,
    flash: Flash,
) -> Result<(HybridFtl, FtlRecovery), RecoveryError> {
    let _ = flash;
    Err(ConfigError::new(
        "ftl.kind",
        format!("{:?} cannot rebuild its tables from flash yet", r.config.ftl.kind),
    )
    .into())
}
