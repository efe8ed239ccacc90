mod resume_oracle;
