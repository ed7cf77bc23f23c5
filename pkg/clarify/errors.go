package clarify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// The Preflights error codes, which its clients match on.
const (
	codeValidationFailed = "VALIDATION_FAILED"
	codeSessionExpired   = "SESSION_EXPIRED"
	codeSessionNotFound  = "SESSION_NOT_FOUND"
	codeFilesystemError  = "FILESYSTEM_ERROR"
	codeParseError       = "PARSE_ERROR"
	codeRepoNotFound     = "REPO_NOT_FOUND"
	codePatchExtraction  = "PATCH_EXTRACTION_FAILED"
)

// envelopeError is a failure in the Preflights envelope:
// {"status":"error","error":{code, message, details, recovery_hint}}.
type envelopeError struct {
	code, message string
	details       map[string]any
	recoveryHint  string
}

func (e *envelopeError) Error() string { return e.code + ": " + e.message }

// toolError is the isError result: hearth's contract fields (code, message)
// and the Preflights envelope ({"status":"error","error":{...}}) in one object,
// so clients of either read what they expect.
func (e *envelopeError) toolError() *tool.Error {
	details := e.details
	if details == nil {
		details = map[string]any{}
	}
	return &tool.Error{Code: tool.Code(e.code), Message: e.message, Fields: map[string]any{
		"status": "error",
		"error": map[string]any{
			"code": e.code, "message": e.message, "details": details, "recovery_hint": e.recoveryHint,
		},
	}}
}

func parseError(file, reason string) *envelopeError {
	return &envelopeError{code: codeParseError, message: file + " is malformed: " + reason,
		details: map[string]any{"file": file, "reason": reason}, recoveryHint: "Manual fix required: repair or restore " + file}
}

// fsError is FILESYSTEM_ERROR with the path and the operating system's reason.
func fsError(path string, err error) *envelopeError {
	reason := err.Error()
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		reason = pe.Err.Error()
	case errors.As(err, &le):
		reason = le.Err.Error()
	}
	hint := "Check permissions"
	if strings.Contains(reason, "escapes") {
		reason = "the path leads outside the repository (a symbolic link?)"
		hint = "Make docs/ a real directory inside the repository"
	}
	return &envelopeError{code: codeFilesystemError, message: "Cannot write files: " + path + ": " + reason,
		details: map[string]any{"path": path, "reason": reason}, recoveryHint: hint}
}

// isExist reports whether a write failed because the file exists.
func isExist(err error) bool {
	var se *envelopeError
	if errors.As(err, &se) {
		return strings.Contains(fmt.Sprint(se.details["reason"]), "file exists")
	}
	return errors.Is(err, fs.ErrExist)
}
