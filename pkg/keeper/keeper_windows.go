package keeper

// Main returns at once: no keeper runs on Windows, where every child's Job
// Object does its work (pkg/supervisor, docs/decisions/0048-windows-processes.md).
func Main() {}
