package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpwire/mcpwire/client"
)

// callArgs returns the compact arguments of the workload's tools/call.
func (r *run) callArgs() []byte {
	c := &r.cfg
	switch c.Workload {
	case WorkloadProgress:
		return fmt.Appendf(nil, `{"ms":%d,"steps":%d}`, c.SleepMs, c.Steps)
	case WorkloadListen:
		b, _ := json.Marshal(map[string]string{"uri": c.URI})
		return b
	}
	b, _ := compactObject("-args", c.Args)
	return b
}

// httpHeads builds the request line and headers of every template. For
// tools/call it first asks the server for the tool's input schema
// (tools/list, once, at setup) so that arguments annotated x-mcp-header are
// mirrored into Mcp-Param-* headers (PARAM-01, PARAM-05).
func (r *run) httpHeads() error {
	var params []header
	for _, t := range r.tpls {
		if !t.isCall {
			continue
		}
		tool := r.toolOf()
		bs, found, err := r.toolBindings(tool)
		var tlsErr *tlsError
		switch {
		case errors.As(err, &tlsErr):
			// A refused certificate does not heal: the run would only
			// fail again on every connection.
			return fmt.Errorf("connect to %s: %w", r.t.addr, err)
		case err != nil:
			r.warnf("tools/list failed (%v); sending tools/call without Mcp-Param headers", err)
		case !found:
			r.warnf("the server does not list the tool %q", tool)
		}
		hs, err := bs.Headers(r.callArgs())
		if err != nil {
			return err
		}
		if r.cfg.UniqueURIs && len(hs) > 0 {
			// The headers are built once, from -uri; each touch names its
			// own URI in the body, which the header would contradict.
			return fmt.Errorf("-unique-uris: the tool %q mirrors its uri argument into the %s header (x-mcp-header), which cannot follow the URI each touch names; run without -unique-uris", tool, hs[0].Name)
		}
		for _, h := range hs {
			params = append(params, header{h.Name, h.Value})
		}
		break
	}
	for _, t := range r.tpls {
		var name *string
		var extra []header
		switch t.method {
		case "tools/call":
			n := r.toolOf()
			name, extra = &n, params
		case "resources/read":
			name = &r.cfg.URI
		}
		t.head = httpHead(r.t, t.method, name, extra)
	}
	return nil
}

// toolBindings pages through tools/list and returns the x-mcp-header
// bindings of tool.
func (r *run) toolBindings(tool string) (client.HeaderBindings, bool, error) {
	var none client.HeaderBindings
	c := httpConn{addr: r.t.addr, tls: r.t.conf, bufSize: 64 << 10, in: &r.bytesIn, out: &r.bytesOut}
	if err := c.dial(r.cfg.Timeout); err != nil {
		return none, false, err
	}
	defer c.close()
	head := httpHead(r.t, "tools/list", nil, nil)
	cursor := ""
	for page := range 100 {
		var params []byte
		if cursor != "" {
			p, _ := json.Marshal(cursor)
			params = append(append([]byte(`"cursor":`), p...), ',')
		}
		body := newTemplate("tools/list", params, false).appendBody(nil, []byte(fmt.Sprint(page+1)))
		if c.nc == nil {
			if err := c.dial(r.cfg.Timeout); err != nil {
				return none, false, err
			}
		}
		c.nc.SetDeadline(time.Now().Add(r.cfg.Timeout))
		var f fetcher
		status, err := c.roundTrip(fullHTTP(head, body), &f)
		if err != nil {
			return none, false, err
		}
		if f.resp == nil {
			return none, false, fmt.Errorf("HTTP %d without a JSON-RPC response", status)
		}
		var resp struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
			Result struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(f.resp, &resp); err != nil {
			return none, false, err
		}
		if resp.Error != nil {
			return none, false, fmt.Errorf("error %d: %s", resp.Error.Code, resp.Error.Message)
		}
		for _, t := range resp.Result.Tools {
			if t.Name == tool {
				bs, err := client.ParseHeaderBindings(t.InputSchema)
				if err != nil {
					// PARAM-03: an invalid annotation makes the tool unusable
					// over HTTP; say so rather than send wrong headers.
					return none, true, fmt.Errorf("tool %q: %v", tool, err)
				}
				return bs, true, nil
			}
		}
		if resp.Result.NextCursor == "" {
			break
		}
		cursor = resp.Result.NextCursor
	}
	return none, false, nil
}
