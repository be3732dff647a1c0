package engine

import (
	"strconv"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

func levelRank(level []byte) int {
	for i, l := range logLevels {
		if string(level) == l {
			return i
		}
	}
	return -1
}

// logLimit is a request's log limiter: a token bucket of Config.LogBurst
// messages refilled at one per Config.LogInterval. Log messages are not
// coalesced (each says something different): a message beyond the bucket is
// dropped and counted (Stats.LogsDropped), and before the response the
// client gets one warning saying how many of this request's messages were
// dropped, so a loss is never silent. Fields are guarded by Call.mu.
type logLimit struct {
	started bool
	dropped int // started and dropped first: complete and release read them on every request
	tokens  float64
	last    time.Time
}

func (l *logLimit) reset() { *l = logLimit{} }

// take spends a token at now if one is left; interval <= 0 or a negative
// burst means no limit.
func (l *logLimit) take(now time.Time, interval time.Duration, burst int) bool {
	if interval <= 0 || burst < 0 {
		return true
	}
	if !l.started {
		l.started, l.tokens, l.last = true, float64(burst), now
	} else if d := now.Sub(l.last); d > 0 {
		l.tokens += float64(d) / float64(interval)
		if l.tokens > float64(burst) {
			l.tokens = float64(burst)
		}
		l.last = now
	}
	if l.tokens < 1 {
		l.dropped++
		return false
	}
	l.tokens--
	return true
}

// flushLocked sends the drop summary, once, while the call still runs
// (from complete, just before the response; GEN-12): a warning from logger
// "mcpwire" whose data is {"droppedLogMessages":N}, when the request's
// logLevel lets warnings through.
func (l *logLimit) flushLocked(c *Call) {
	if l.dropped != 0 { // inlined: most requests dropped nothing
		l.flush(c)
	}
}

func (l *logLimit) flush(c *Call) {
	n := l.dropped
	l.dropped = 0
	if c.logWanted("warning") < 0 {
		return
	}
	b := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"mcpwire","data":{"droppedLogMessages":`)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `}}}`...)
	_ = c.rep.Notify(c.req(), b)
}

// logWanted returns the rank of level when this request asked for logs at
// or below it, else -1.
func (c *Call) logWanted(level string) int {
	if !c.srv.opt.Logging || !c.env.LogLevel.Present {
		return -1
	}
	want := -1
	for i, l := range logLevels {
		if c.env.LogLevel.EqualString(l) {
			want = i
		}
	}
	got := levelRank([]byte(level))
	if got < 0 || want < 0 || got < want {
		return -1
	}
	return got
}

// Log sends a notifications/message for this request (deprecated logging,
// GEN-13): only when the server was built with Config.Logging, the request's
// _meta carries io.modelcontextprotocol/logLevel, and level is at or above
// it. It travels with the request only (GEN-12) and never after the
// response. level is one of debug, info, notice, warning, error, critical,
// alert, emergency; loggerName may be empty; data is any JSON-encodable
// value. It reports whether the message was sent.
//
// Messages are rate limited per request (Config.LogInterval and LogBurst,
// default a burst of 20 then one per 10 ms): a message over the limit is
// dropped, Log returns false, Stats.LogsDropped counts it, and the client
// is told how many were dropped by one warning just before the response.
func (c *Call) Log(level, loggerName string, data any) bool {
	if c.logWanted(level) < 0 {
		return false
	}
	c.mu.Lock()
	ok := c.state == stateRunning && c.logs.take(time.Now(), c.srv.opt.LogInterval, c.srv.opt.LogBurst)
	if !ok && c.state == stateRunning {
		c.srv.stats.LogsDropped.Add(1)
	}
	c.mu.Unlock()
	if !ok {
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
	if c.notify(b) != nil {
		return false
	}
	c.srv.stats.LogsSent.Add(1)
	return true
}
