mod import_edge;
mod resume_cli;
mod resume_oracle;
mod resume_store;
mod roundtrip;
mod support;
mod resume_props;
mod sdk_goldens;
