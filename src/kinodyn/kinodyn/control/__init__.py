"""Control laws and the whole-body QP controller (Seed 000 §3.8-§3.10; Seed 003 §2.6, §3.7)."""
