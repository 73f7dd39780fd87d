"""End-to-end tests: drive the `nfpark` binary as a user would."""
