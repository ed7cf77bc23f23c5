package daemon

import (
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// NewLogger returns the daemon's logger: JSON lines on stderr, ISO-8601 UTC
// timestamps, no sampling (zap's production default drops lines past 100 a
// second, which would hide the very bursts worth reading), and no stack
// traces: zap's default adds one to every error line, but the errors logged
// are expected conditions (a second serve, a schema directory that does not
// exist) that their message explains; a tool's panic logs its own stack.
func NewLogger(level string) (*zap.Logger, error) {
	cfg := zap.NewProductionConfig()
	cfg.Sampling = nil
	cfg.DisableStacktrace = true
	cfg.OutputPaths = []string{"stderr"}
	cfg.ErrorOutputPaths = []string{"stderr"}
	cfg.EncoderConfig.TimeKey = "ts"
	cfg.EncoderConfig.EncodeTime = func(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
		enc.AppendString(t.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	if err := cfg.Level.UnmarshalText([]byte(level)); err != nil {
		return nil, err
	}
	return cfg.Build()
}
