package socket

import (
	"context"
	"fmt"
	"log/slog"
)

// gnetLogger sends gnet's own logs to the transport's slog.Logger (gnet's
// default logger writes to stdout, which on a stdio server is the protocol
// stream). gnet's informational chatter goes to Debug.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) log(level slog.Level, format string, args ...any) {
	if g.l.Enabled(context.Background(), level) {
		g.l.Log(context.Background(), level, "gnet: "+fmt.Sprintf(format, args...))
	}
}

func (g gnetLogger) Debugf(format string, args ...any) { g.log(slog.LevelDebug, format, args...) }
func (g gnetLogger) Infof(format string, args ...any)  { g.log(slog.LevelDebug, format, args...) }
func (g gnetLogger) Warnf(format string, args ...any)  { g.log(slog.LevelWarn, format, args...) }
func (g gnetLogger) Errorf(format string, args ...any) { g.log(slog.LevelError, format, args...) }

// Fatalf logs at Error: a library must not end the process.
func (g gnetLogger) Fatalf(format string, args ...any) { g.log(slog.LevelError, format, args...) }
