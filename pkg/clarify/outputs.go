package clarify

// The clarification tools' results. Their output schemas are derived from
// these types (tool.OutputOf: the jsonschema tag is a description); their
// errors are isError results and are not described here.

// requireResult is require_clarification's result: questions to answer, or
// the documents written.
type requireResult struct {
	Status    string         `json:"status" enum:"needs_clarification,completed" jsonschema:"needs_clarification: answer the questions with session_id; completed: the documents are written."`
	SessionID string         `json:"session_id,omitempty" jsonschema:"The session to continue (needs_clarification)."`
	Questions []Question     `json:"questions,omitempty" jsonschema:"The questions to answer next (needs_clarification)."`
	Progress  progress       `json:"progress,omitzero" jsonschema:"How far the clarification has come (needs_clarification)."`
	Artifacts []artifactJSON `json:"artifacts_created,omitempty" jsonschema:"The documents written (completed)."`
	Summary   string         `json:"summary,omitempty" jsonschema:"What was decided and written (completed)."`
	Warning   string         `json:"warning,omitempty" const:"llm_fallback" jsonschema:"The deterministic planner stood in for an LLM that failed."`
	Message   string         `json:"message,omitempty" jsonschema:"What the warning means."`
}

type progress struct {
	AskedSoFar int `json:"asked_so_far" jsonschema:"Questions asked."`
	Answered   int `json:"answered" jsonschema:"Questions answered."`
}

// artifactJSON is a document a completed clarification wrote.
type artifactJSON struct {
	Path string `json:"path" jsonschema:"The document, relative to the repository."`
	Type string `json:"type" jsonschema:"What it is: adr, task_archive (the previous task, moved aside), task or projection."`
	UID  string `json:"uid,omitempty" jsonschema:"The UID of an adr or a task_archive."`
}

// readResult is read_architecture's result.
type readResult struct {
	Status       string           `json:"status" const:"success" jsonschema:"Always success; errors are isError results."`
	Architecture architectureJSON `json:"architecture" jsonschema:"The latest ADR's decisions."`
	SourceFile   string           `json:"source_file" jsonschema:"The projection file, relative to the repository."`
}

type architectureJSON struct {
	UID        *string  `json:"uid" jsonschema:"The latest ADR's UID; null before the first."`
	Categories Snapshot `json:"categories" jsonschema:"Its decisions by category."`
}
