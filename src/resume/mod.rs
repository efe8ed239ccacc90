//! Resume: rebuild a stored conversation the way Claude Code does.
