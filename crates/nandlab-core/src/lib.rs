#![forbid(unsafe_code)]
pub mod request;
