package pgstore

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// connectTimeout bounds one attempt to reach the server, so a call made
// while the server is unreachable is answered promptly.
const connectTimeout = 3 * time.Second

// parse reads a postgres:// URL or a key/value DSN. where names the server
// and database for messages and daemon_status: never the password, never
// the whole DSN. An error never echoes the DSN.
func parse(dsn string) (*pgx.ConnConfig, string, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, "", errors.New("the PostgreSQL store's URL is empty")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgconn's parse errors quote the DSN (password masked); say only what is wrong.
		return nil, "", errors.New("HEARTH_STORE_URL is not a valid postgres:// URL or key/value DSN")
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > connectTimeout {
		cfg.ConnectTimeout = connectTimeout
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "hearthd"
	}
	return cfg, Where(cfg), nil
}

// Where names a server and database without credentials: user@host:port/db.
func Where(cfg *pgx.ConnConfig) string {
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		return fmt.Sprintf("%s@[%s]:%d/%s", cfg.User, host, cfg.Port, cfg.Database)
	}
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, host, cfg.Port, cfg.Database)
}

// clean is err's message with the password masked wherever it appears:
// errors reach logs, and a password must never.
func clean(err error, password string) string {
	msg := err.Error()
	if password != "" {
		msg = strings.ReplaceAll(msg, password, "xxxxx")
	}
	return msg
}

// Describe names the server and database of dsn for daemon_status, without
// credentials; a DSN that does not parse is described as such, not echoed.
func Describe(dsn string) string {
	_, where, err := parse(dsn)
	if err != nil {
		return "(HEARTH_STORE_URL does not parse)"
	}
	return where
}
