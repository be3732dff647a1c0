package refserver

import (
	"encoding/binary"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/mrtr"
)

// requestState of the MRTR fixtures (SEC-07). Signing, verifying, key
// rotation and the binding to principal, method, target and arguments are
// package mrtr's (Config.State); what the fixtures put in a state is
// theirs: the round (uvarint), then the data carried to the next round
// (the name, in multi_round).

// stateData is the verified content of a requestState.
type stateData struct {
	round uint64
	data  string
}

// mrtrIn is what a (possibly retried) MRTR request carries.
type mrtrIn struct {
	mrtr.InputResponses
	state *stateData // nil: no requestState
}

// mrtrInput verifies params.requestState, then reads params.inputResponses:
// a state that does not verify, or inputResponses that is not an object,
// fails the request with -32602 before anything else happens.
func (r *refServer) mrtrInput(c *engine.Call) (mrtrIn, error) {
	var in mrtrIn
	data, ok, err := r.state.Verify(c)
	if err != nil {
		r.log.Debug("requestState refused", "method", c.Method(), "name", c.Name(), "reason", err)
		return in, err
	}
	if ok {
		round, n := binary.Uvarint(data)
		if n <= 0 {
			// Authentic, but not what ask wrote: a state of another
			// server sharing our keys.
			return in, errBadRound
		}
		in.state = &stateData{round: round, data: string(data[n:])}
	}
	in.InputResponses, err = mrtr.Responses(c)
	return in, err
}

// ask answers with an InputRequiredResult carrying reqs and a new state
// for round (data travels in it, integrity-protected).
func (r *refServer) ask(c *engine.Call, reqs map[string]mcp.InputRequest, round uint64, data string) error {
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(data)), round)
	return r.state.Ask(c, reqs, append(b, data...))
}

// principalString is the stable string form of a principal that the
// drafts (drafts.go) key the store by: the identity a state is bound to
// ("s:" and a string, "t:" and a fmt.Stringer's String), or "" when there
// is none to rely on (nil or a typed nil, an empty String, another type).
func principalString(p any) string {
	if p == nil {
		return ""
	}
	id, err := mrtr.DefaultPrincipal(p)
	if err != nil || id == "n:" {
		return ""
	}
	return id
}
