//! `ftl.kind = "page"`: the page-mapped log-structured store (`ftl::page`), with its cleaning
//! policy (`gc`), its placement (`placement`) and the cleaner's free-block reserve.

use super::FtlKindEntry;
use crate::ftl::FtlSpec;

pub(super) const ENTRY: FtlKindEntry = FtlKindEntry {
    name: "page",
    params: &[],
    granule_blocks: |_| 0,
    resolve: |f, tables, g, hw| {
        let cleaning = crate::gc::resolve(f, tables)?;
        let placement = crate::placement::resolve(f, tables)?;
        let page = crate::ftl::spec::resolve_page(f, cleaning, placement, g, hw)?;
        Ok(FtlSpec::Page(page))
    },
};
