"""hwcheck's specification: what the replication protocol is (no engine code here)."""
