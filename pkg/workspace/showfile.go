package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/safefile"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

type showArgs struct {
	Path      string `json:"path"`
	RepoPath  string `json:"repo_path,omitempty"`
	StartLine *int   `json:"start_line,omitempty"`
	EndLine   *int   `json:"end_line,omitempty"`
}

type showResult struct {
	Repo      string `json:"repo"`
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"` // last line shown; start_line-1 when none
	// TotalLines is the file's line count, null for a file over
	// countLinesMax (counting would read all of it).
	TotalLines *int  `json:"total_lines"`
	Size       int64 `json:"size"`
	// Text is the lines, each as "<number>\t<line>\n".
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"` // the 1 MiB bound cut the range short
}

// countLinesMax is the largest file show_file reads to the end to count its
// lines.
const countLinesMax = 16 << 20

// binarySniff matches the indexer: a NUL in the first 8000 bytes means binary.
const binarySniff = 8000

func (f *Family) showFile(ctx context.Context, call *tool.Call, a showArgs) (*showResult, error) {
	rel, err := localFile(a.Path)
	if err != nil {
		return nil, err
	}
	start, end := 1, 0
	if a.StartLine != nil {
		start = *a.StartLine
	}
	if a.EndLine != nil {
		end = *a.EndLine
		if end < start {
			return nil, tool.Errorf(tool.InvalidRequest, "end_line %d is before start_line %d", end, start)
		}
	}
	root, err := f.root(a.RepoPath, call.Client)
	if err != nil {
		return nil, err
	}
	// os.Root refuses, race-free, any path that leaves root: "..", and
	// symbolic links pointing out of it.
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, tool.Errorf(tool.Internal, "cannot open the repository %s: %v", root, err)
	}
	defer r.Close()
	// Only a regular file is opened, and never in a way that blocks: a FIFO,
	// a socket or a device is refused (see pkg/safefile).
	fh, err := safefile.OpenIn(r, rel)
	if err != nil {
		return nil, openError(a.Path, root, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, tool.Errorf(tool.Internal, "cannot read %s: %v", a.Path, err)
	}

	br := bufio.NewReaderSize(fh, 64<<10)
	head, _ := br.Peek(binarySniff)
	if bytes.IndexByte(head, 0) >= 0 {
		return nil, tool.Errorf(tool.InvalidRequest, "%s is a binary file (it holds NUL bytes); show_file shows text only", a.Path)
	}
	res := showResult{Repo: root, Path: filepath.ToSlash(rel), StartLine: start, EndLine: start - 1, Size: fi.Size()}
	var text strings.Builder
	line, eof := 0, false
	for {
		if line&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		b, err := readLine(br)
		if err == io.EOF {
			eof = true
			break
		}
		if err != nil {
			return nil, tool.Errorf(tool.Internal, "cannot read %s: %v", a.Path, err)
		}
		line++
		if line < start {
			continue
		}
		if (end > 0 && line > end) || res.Truncated {
			if fi.Size() > countLinesMax {
				break // past the range, and too large to read on just to count
			}
			continue
		}
		num := strconv.Itoa(line) + "\t"
		if text.Len()+len(num)+len(b)+1 > showFileMaxBytes {
			if text.Len() == 0 { // one huge line: show its start
				text.WriteString(num)
				text.Write(b[:max(0, showFileMaxBytes-len(num)-1)])
				text.WriteByte('\n')
				res.EndLine = line
			}
			res.Truncated = true
			continue
		}
		text.WriteString(num)
		text.Write(b)
		text.WriteByte('\n')
		res.EndLine = line
	}
	if eof {
		res.TotalLines = &line
		if line < start && start > 1 {
			return nil, tool.Errorf(tool.InvalidRequest, "start_line %d is past the end of %s (%d lines)", start, a.Path, line)
		}
	}
	res.Text = text.String()
	return &res, nil
}

// readLine returns the next line without its line ending, however long it is.
func readLine(br *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(long) <= showFileMaxBytes { // keep what can be shown; drop the rest
				long = append(long, b...)
			}
			continue
		}
		if err == io.EOF && len(b) == 0 && long == nil {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if long != nil {
			b = append(long, b...)
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		return b, nil
	}
}

// localFile checks show_file's path: relative, inside the repository, no NUL.
func localFile(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", tool.Errorf(tool.InvalidRequest, "path contains a NUL byte")
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return "", tool.Errorf(tool.InvalidRequest, "path %q is absolute; give it relative to the repository root", p).
			With("hint", "search returns paths in the form show_file expects")
	}
	rel := filepath.Clean(filepath.FromSlash(p))
	if !filepath.IsLocal(rel) {
		return "", tool.Errorf(tool.InvalidRequest, "path %q leaves the repository", p)
	}
	return rel, nil
}

func openError(p, root string, err error) error {
	var nr *safefile.NotRegularError
	switch {
	case errors.As(err, &nr):
		return tool.Errorf(tool.InvalidRequest, "%s is a %s, not a regular file; show_file shows regular files only", p, nr.Kind)
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf(tool.NotFound, "%s does not exist in %s", p, root)
	case errors.Is(err, fs.ErrPermission):
		return tool.Errorf(tool.InvalidRequest, "%s cannot be read: permission denied", p)
	case strings.Contains(err.Error(), "escapes"):
		return tool.Errorf(tool.InvalidRequest, "%s leads out of the repository through a symbolic link", p)
	}
	return tool.Errorf(tool.Internal, "cannot open %s: %v", p, fmt.Sprint(err))
}
