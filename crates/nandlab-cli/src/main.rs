//! `nandlab`: the command-line binary. Everything it does is `nandlab_cli::main_with_args`
//! (`lib.rs`), whose commands the Python module also runs; only the allocator is the binary's
//! own.

use std::process::ExitCode;

/// Large simulator tables get transparent huge pages (fewer TLB misses on random lookups).
/// Declared here rather than in the library: a global allocator belongs to the final program,
/// and the Python module that links the library declares its own.
#[global_allocator]
static ALLOCATOR: nandlab_prefetch::HugePageAlloc = nandlab_prefetch::HugePageAlloc;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    ExitCode::from(nandlab_cli::main_with_args(&argv))
}
