package daemon

import (
	"github.com/hearth-mcp/hearth/pkg/clarify"
	"github.com/hearth-mcp/hearth/pkg/memory"
	"github.com/hearth-mcp/hearth/pkg/schemas"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/workspace"
)

// Families lists the tool families hearthd wires, in one place (the CoreDNS
// plugin.cfg pattern): adding a family touches this list and nothing else.
// daemon_status is built in. Every family opens with the daemon's tool.Env;
// a family that starts processes is also handed children, the daemon's one
// subprocess supervisor (none calls os/exec), when the list is made.
func Families(children *supervisor.Supervisor) []tool.Opener {
	return []tool.Opener{
		schemas.Open,             // list/get schemas and examples, validate_asset (+validate), validate_many, diff_assets, populate_backend
		memory.Open,              // add_memory, search_memory, get_stats, delete_memory
		clarify.Open,             // require_clarification, read_architecture
		workspace.Open(children), // index_build, index_status, search, show_file, check_status, workspace_status
	}
}
