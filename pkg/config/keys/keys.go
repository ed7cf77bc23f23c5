// Package keys names hearthd's settings: each config-file key and the
// environment variable that overrides it. It uses only the standard library
// so that the shim can tell a setting variable from any other without
// linking the config file's parser.
package keys

import "time"

// ConfigVar names the config file to read instead of the default
// (~/.config/hearth/config.toml). It is a location, not a setting.
const ConfigVar = "HEARTH_CONFIG"

// Setting is one config-file key and its environment variable.
type Setting struct {
	Key string // snake_case key in config.toml
	Var string // the environment variable that overrides it
}

// Settings lists every setting, in the order docs/reference.md documents them.
// Location variables (HEARTH_HOME, MCP_SOCKET_PATH, MCP_READY_FILE,
// MCP_ENDPOINT, HEARTH_CONFIG, XDG_*, HOME) and the shim's own variables
// (HEARTH_DAEMON, HEARTH_NO_AUTOSTART) are not settings.
var Settings = []Setting{
	{"schemas_dir", "SYN_SCHEMAS_DIR"},
	{"examples_dir", "SYN_EXAMPLES_DIR"},
	{"schemas_base_url", "SYN_SCHEMAS_BASE_URL"},
	{"max_batch", "MCP_MAX_BATCH"},
	{"backend_url", "SYN_BACKEND_URL"},
	{"backend_assets_path", "SYN_BACKEND_ASSETS_PATH"},
	{"store_url", "HEARTH_STORE_URL"},
	{"embed_url", "HEARTH_EMBED_URL"},
	{"embed_model", "HEARTH_EMBED_MODEL"},
	{"llm_provider", "PREFLIGHTS_LLM_PROVIDER"},
	{"llm_url", "PREFLIGHTS_LLM_URL"},
	{"llm_model", "PREFLIGHTS_LLM_MODEL"},
	{"llm_api_key", "PREFLIGHTS_LLM_API_KEY"},
	{"llm_timeout", "PREFLIGHTS_LLM_TIMEOUT"},
	{"queue_depth", "HEARTH_QUEUE_DEPTH"},
	{"max_calls", "HEARTH_MAX_CALLS"},
	{"max_connections", "HEARTH_MAX_CONNECTIONS"},
	{"max_held_mb", "HEARTH_MAX_HELD_MB"},
	{"max_children", "HEARTH_MAX_CHILDREN"},
	{"kill_grace", "HEARTH_KILL_GRACE"},
	{"drain_timeout", "HEARTH_DRAIN_TIMEOUT"},
	{"idle_timeout", "HEARTH_IDLE_TIMEOUT"},
	{"log_level", "HEARTH_LOG_LEVEL"},
	{"socket_mode", "MCP_SOCKET_MODE"},
	{"http_listen", "HEARTH_HTTP_LISTEN"},
	{"http_auth", "HEARTH_HTTP_AUTH"},
	{"hosted_control", "HEARTH_HOSTED_CONTROL"},
	{"upgrade_handover", "HEARTH_UPGRADE_HANDOVER"},
	{"open_url", "HEARTH_OPEN_URL"},
}

// SettingVars lists the environment variables of Settings, in its order.
var SettingVars = func() []string {
	out := make([]string, len(Settings))
	for i, s := range Settings {
		out[i] = s.Var
	}
	return out
}()

// IsSettingVar reports whether name is a setting's environment variable.
func IsSettingVar(name string) bool {
	for _, s := range Settings {
		if s.Var == name {
			return true
		}
	}
	return false
}

// The settings' defaults, each written here once: pkg/config reports them
// (daemon_status, hearthd validate, docs/reference.md's values), and the
// packages that apply a setting take its default from here.
const (
	DefaultMaxBatch          = 100                    // max_batch
	DefaultBackendAssetsPath = "/synesthetic-assets/" // backend_assets_path
	DefaultLLMTimeout        = 20 * time.Second       // llm_timeout
	DefaultQueueDepth        = 1024                   // queue_depth
	DefaultMaxCalls          = 16                     // max_calls
	DefaultMaxConnections    = 512                    // max_connections
	DefaultMaxHeldMB         = 512                    // max_held_mb
	DefaultMaxChildren       = 8                      // max_children
	DefaultKillGrace         = 2 * time.Second        // kill_grace
	DefaultDrainTimeout      = 10 * time.Second       // drain_timeout
	DefaultLogLevel          = "info"                 // log_level
	DefaultSocketMode        = 0o600                  // socket_mode
	DefaultHTTPAuth          = "token"                // http_auth
	DefaultHostedControl     = false                  // hosted_control
	DefaultUpgradeHandOver   = true                   // upgrade_handover
)
