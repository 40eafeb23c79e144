//! Symptom diagnosis from a PBR result (paper 003 §5, SPEC §8): suboptimal write buffer,
//! mapping or garbage collection. Not built yet: `nandlab pbr` reports the PBR series; the
//! diagnosis is the next part of issue 19 (docs/ROADMAP.md).
