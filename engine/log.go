package engine

import "github.com/mcpwire/mcpwire/codec"

func levelRank(level []byte) int {
	for i, l := range logLevels {
		if string(level) == l {
			return i
		}
	}
	return -1
}

// Log sends a notifications/message for this request (deprecated logging,
// GEN-13): only when the server was built with Options.Logging, the request's
// _meta carries io.modelcontextprotocol/logLevel, and level is at or above
// it. It travels with the request only (GEN-12) and never after the
// response. level is one of debug, info, notice, warning, error, critical,
// alert, emergency; loggerName may be empty; data is any JSON-encodable
// value. It reports whether the message was sent.
func (c *Call) Log(level, loggerName string, data any) bool {
	if !c.srv.opt.Logging || !c.env.LogLevel.Present {
		return false
	}
	want := -1
	for i, l := range logLevels {
		if c.env.LogLevel.EqualString(l) {
			want = i
		}
	}
	got := levelRank([]byte(level))
	if got < 0 || want < 0 || got < want {
		return false
	}
	enc, err := codec.Marshal(data)
	if err != nil {
		return false
	}
	b := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":`)
	b = codec.AppendString(b, level)
	if loggerName != "" {
		b = append(b, `,"logger":`...)
		b = codec.AppendString(b, loggerName)
	}
	b = append(b, `,"data":`...)
	b = append(b, enc...)
	b = append(b, `}}`...)
	return c.notify(b) == nil
}
