"""Coverage-guided fuzzing of kafkawire's hostile-input surfaces (see fuzz/README.md and docs/SECURITY.md)."""
