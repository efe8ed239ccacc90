mod import_edge;
mod resume_oracle;
mod roundtrip;
mod support;
