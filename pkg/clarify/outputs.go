package clarify

import "github.com/hearth-mcp/hearth/pkg/tool"

// The clarification tools' output schemas (tool.Tool.OutputSchema). Their
// errors are isError results and are not described here.

var warningOut = []tool.Property{
	tool.Prop("warning", `{"type":"string","const":"llm_fallback","description":"The deterministic planner stood in for an LLM that failed."}`),
	tool.Prop("message", `{"type":"string","description":"What the warning means."}`),
}

// requireOut is require_clarification's result: questions to answer, or
// the documents written.
var requireOut = tool.Output(append([]tool.Property{
	tool.Prop("status", `{"type":"string","enum":["needs_clarification","completed"],"description":"needs_clarification: answer the questions with session_id; completed: the documents are written."}`).Required(),
	tool.Prop("session_id", `{"type":"string","description":"The session to continue (needs_clarification)."}`),
	tool.Prop("questions", `{"type":"array","items":{"type":"object"},"description":"The questions to answer next (needs_clarification)."}`),
	tool.Prop("progress", `{"type":"object","required":["asked_so_far","answered"],"description":"How far the clarification has come (needs_clarification).","properties":{
		"asked_so_far":{"type":"integer","description":"Questions asked."},"answered":{"type":"integer","description":"Questions answered."}}}`),
	tool.Prop("artifacts_created", `{"type":"array","description":"The documents written (completed).","items":{"type":"object","required":["path","type"],"properties":{
		"path":{"type":"string","description":"The document, relative to the repository."},"type":{"type":"string","description":"What it is: adr, task or projection."}}}}`),
	tool.Prop("summary", `{"type":"string","description":"What was decided and written (completed)."}`),
}, warningOut...)...)

// readOut is read_architecture's result.
var readOut = tool.Output(
	tool.Prop("status", `{"type":"string","const":"success","description":"Always success; errors are isError results."}`).Required(),
	tool.Prop("architecture", `{"type":"object","required":["uid","categories"],"description":"The latest ADR's decisions.","properties":{
		"uid":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"The latest ADR's UID; null before the first."},
		"categories":{"type":"object","description":"Its decisions by category."}}}`).Required(),
	tool.Prop("source_file", `{"type":"string","description":"The projection file, relative to the repository."}`).Required())
