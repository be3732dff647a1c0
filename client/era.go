package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

// ServerDescription is what a server said about itself: its DiscoverResult
// (modern) or InitializeResult (legacy).
type ServerDescription struct {
	Era          Era                `json:"era"`
	Version      string             `json:"protocolVersion"`
	Supported    []string           `json:"supportedVersions,omitempty"`
	Info         mcp.Implementation `json:"serverInfo"`
	Capabilities json.RawMessage    `json:"capabilities"`
	Instructions string             `json:"instructions,omitempty"`
}

// modernVersions are the per-request-metadata revisions this client
// speaks, newest first; legacyVersions the initialize-era ones.
var (
	modernVersions = []string{Version2026}
	legacyVersions = []string{Version2025, "2025-06-18", "2025-03-26", Version2024}
)

// Probe runs the era probe now (it otherwise runs on the first call) and
// returns what the server said about itself.
func (c *Client) Probe(ctx context.Context) (*ServerDescription, error) {
	if err := c.ensureEra(ctx); err != nil {
		return nil, err
	}
	if d := c.server.Load(); d != nil {
		return d, nil
	}
	// The era was fixed by Config: ask now.
	if c.Era() == EraModern {
		if _, err := c.discover(ctx); err != nil {
			return nil, err
		}
	}
	return c.server.Load(), nil
}

func (c *Client) ensureEra(ctx context.Context) error {
	if c.Era() != EraUnknown {
		return nil
	}
	c.eraMu.Lock()
	defer c.eraMu.Unlock()
	if c.Era() != EraUnknown {
		return nil
	}
	return c.probe(ctx)
}

// isHTTP reports a transport whose wire changes with the era (COMPAT-01
// rules apply rather than STD-17's).
func (c *Client) isHTTP() bool {
	_, ok := c.t.(eraSetter)
	return ok
}

// probe decides the era: server/discover with the preferred modern
// version first (STD-17, COMPAT-01); a DiscoverResult or a recognised
// modern error means modern (COMPAT-02, the conservative set); auth, 5xx
// and (on HTTP) timeouts are reported, not taken as legacy (RELIABILITY
// D7); a connection lost before the answer is probed again once; anything else
// falls back to initialize, and on HTTP a 400/404/405 from that to the
// 2024-11-05 HTTP+SSE transport (COMPAT-04).
func (c *Client) probe(ctx context.Context) error {
	if c.opts.Era == Era2025 || c.opts.Era == Era2024 {
		return c.legacySetup(ctx)
	}
	// Two retry reasons, each with its own single retry: a version
	// retry (DISC-04) and a probe again after a dropped connection.
	// Sharing one budget would let either one starve the other.
	var droppedRetried, versionRetried bool
	for attempt := 0; attempt < 3; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, c.opts.ProbeTimeout)
		d, err := c.discover(pctx)
		cancel()
		if err == nil {
			if v := pick(modernVersions, d.Supported, c.ProtocolVersion()); v != "" {
				c.setVersion(v)
				c.era.Store(uint32(EraModern))
				return nil
			}
			if pick(legacyVersions, d.Supported, "") != "" {
				// A DiscoverResult that lists only initialize-era
				// revisions (go-sdk v1.8.0's stateful HTTP mode): the
				// server speaks legacy only, so fall back to initialize.
				c.server.Store(nil)
				return c.fallback(ctx)
			}
			return fmt.Errorf("client: server supports %v, none of %v", d.Supported, modernVersions)
		}
		var re *RPCError
		var se *StatusError
		switch {
		case errors.As(err, &re) && re.Code == -32022:
			var data struct {
				Supported []string `json:"supported"`
			}
			_ = codec.Unmarshal(re.Data, &data)
			if v := pick(modernVersions, data.Supported, ""); v != "" && !versionRetried {
				versionRetried = true
				c.setVersion(v) // DISC-04: retry with a mutual version
				continue
			}
			if pick(legacyVersions, data.Supported, "") != "" && pick(modernVersions, data.Supported, "") == "" {
				return c.fallback(ctx)
			}
			return fmt.Errorf("client: no mutual protocol version: %w", err)
		case errors.As(err, &re) && (re.Code == -32020 || re.Code == -32021):
			// A modern server that refused this request's headers or
			// capabilities: modern, but report the problem.
			c.era.Store(uint32(EraModern))
			return err
		case errors.As(err, &se) && (se.Status == 401 || se.Status == 403 || se.Status >= 500):
			return fmt.Errorf("client: probe refused (not taken as a legacy server, COMPAT-02): %w", err)
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) && c.isHTTP():
			return fmt.Errorf("client: probe timed out (not taken as a legacy server, COMPAT-02): %w", err)
		case errors.Is(err, ErrClosed):
			return err
		case errors.Is(err, ErrNotDelivered):
			// Nothing reached a server (it could not be started or
			// dialled): no evidence either way.
			return err
		case errors.Is(err, ErrDropped) && !droppedRetried:
			// The connection was lost before the answer: a stdio server
			// that died (started again on the next request), a cut HTTP
			// stream. That is no evidence of a legacy server: probe
			// once more (issue 20: a crash used to mean legacy).
			droppedRetried = true
			c.opts.Logger.Debug("client: connection lost during the probe; probing again", "err", err)
			continue
		case errors.Is(err, ErrDropped) && (c.isHTTP() || versionRetried):
			// On HTTP, or after a -32022 that showed a modern server.
			return fmt.Errorf("client: connection lost twice during the probe (not taken as a legacy server): %w", err)
		}
		// A stdio server that exits on every pre-initialize request (a
		// legacy server that does not survive an unknown method) ends
		// here after its second ErrDropped.
		c.opts.Logger.Debug("client: probe says legacy", "err", err)
		return c.fallback(ctx)
	}
	return errors.New("client: probe failed")
}

// pick returns want if it is in both lists, else the first of ours that
// the server lists.
func pick(ours, theirs []string, want string) string {
	if want != "" && slices.Contains(ours, want) && slices.Contains(theirs, want) {
		return want
	}
	for _, v := range ours {
		if slices.Contains(theirs, v) {
			return v
		}
	}
	return ""
}

func (c *Client) setVersion(v string) { c.version.Store(&v) }

// discover sends server/discover and records the description.
func (c *Client) discover(ctx context.Context) (*ServerDescription, error) {
	res, err := c.roundTrip(ctx, "server/discover", nil, &CallOptions{})
	if err != nil {
		return nil, err
	}
	var r struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions"`
		Meta              struct {
			Info mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := codec.Unmarshal(res.Raw, &r); err != nil || r.SupportedVersions == nil {
		return nil, fmt.Errorf("client: server/discover result is not a DiscoverResult")
	}
	d := &ServerDescription{Era: EraModern, Supported: r.SupportedVersions, Info: r.Meta.Info,
		Capabilities: r.Capabilities, Instructions: r.Instructions}
	d.Version = pick(modernVersions, r.SupportedVersions, c.ProtocolVersion())
	c.server.Store(d)
	return d, nil
}

// fallback moves to the 2025-11-25 era: initialize, then (HTTP only) the
// 2024-11-05 HTTP+SSE transport when the POST itself is refused.
func (c *Client) fallback(ctx context.Context) error {
	if es, ok := c.t.(eraSetter); ok {
		if err := es.SwitchEra(ctx, Era2025); err != nil {
			return err
		}
	}
	c.setVersion(Version2025)
	c.era.Store(uint32(Era2025))
	var err error
	if cn, ok := c.t.(connector); ok {
		// A line stream: if the probe killed the server (STD-18), the new
		// connection's hook has already run initialize.
		var fresh bool
		if fresh, err = cn.Connect(ctx); err == nil && !fresh {
			err = c.initialize(ctx, false)
		}
	} else {
		err = c.initialize(ctx, false)
	}
	if err == nil {
		return nil
	}
	var se *StatusError
	es, http := c.t.(eraSetter)
	if !http || !errors.As(err, &se) || (se.Status != 400 && se.Status != 404 && se.Status != 405) {
		c.era.Store(uint32(EraUnknown))
		return fmt.Errorf("client: legacy initialize failed: %w", err)
	}
	if err := es.SwitchEra(ctx, Era2024); err != nil {
		c.era.Store(uint32(EraUnknown))
		return fmt.Errorf("client: neither Streamable HTTP nor HTTP+SSE: %w", err)
	}
	c.setVersion(Version2024)
	c.era.Store(uint32(Era2024))
	if err := c.initialize(ctx, false); err != nil {
		c.era.Store(uint32(EraUnknown))
		return err
	}
	return nil
}

// legacySetup moves to the legacy era fixed by Config.Era without a
// probe: Era2025 goes through fallback (initialize; on HTTP the 2024-11-05
// transport if the POST is refused), Era2024 straight to HTTP+SSE.
func (c *Client) legacySetup(ctx context.Context) error {
	if c.opts.Era == Era2025 {
		return c.fallback(ctx)
	}
	es, ok := c.t.(eraSetter)
	if !ok {
		return errors.New("client: Era2024 (HTTP+SSE) needs a Streamable HTTP transport")
	}
	if err := es.SwitchEra(ctx, Era2024); err != nil {
		return fmt.Errorf("client: HTTP+SSE: %w", err)
	}
	c.setVersion(Version2024)
	c.era.Store(uint32(Era2024))
	if err := c.initialize(ctx, false); err != nil {
		c.era.Store(uint32(EraUnknown))
		return err
	}
	return nil
}

// initialize runs the legacy handshake: initialize, then
// notifications/initialized.
func (c *Client) initialize(ctx context.Context, handshake bool) error {
	params, _ := marshalRaw(map[string]any{
		"protocolVersion": c.ProtocolVersion(),
		"capabilities":    json.RawMessage(c.opts.Capabilities),
		"clientInfo":      c.opts.Info,
	})
	out, err := c.build(ctx, "initialize", params, nil, false)
	if err != nil {
		return err
	}
	out.Handshake = handshake
	ex, err := c.t.Open(ctx, out)
	if err != nil {
		return err
	}
	var res *Result
	for {
		msg, err := ex.Next(ctx)
		if err != nil {
			ex.Close()
			return err
		}
		var in incoming
		if in.parse(msg) != nil || !in.isResponse() {
			continue
		}
		res, err = in.result(statusOf(ex))
		ex.Close()
		if err != nil {
			return err
		}
		break
	}
	var r struct {
		ProtocolVersion string             `json:"protocolVersion"`
		Capabilities    json.RawMessage    `json:"capabilities"`
		ServerInfo      mcp.Implementation `json:"serverInfo"`
		Instructions    string             `json:"instructions"`
	}
	if err := codec.Unmarshal(res.Raw, &r); err != nil {
		return fmt.Errorf("client: bad initialize result: %w", err)
	}
	if r.ProtocolVersion != "" && r.ProtocolVersion != c.ProtocolVersion() {
		if !slices.Contains(legacyVersions, r.ProtocolVersion) {
			return fmt.Errorf("client: server chose protocol version %q, which this client does not speak", r.ProtocolVersion)
		}
		c.setVersion(r.ProtocolVersion)
	}
	c.server.Store(&ServerDescription{Era: c.Era(), Version: c.ProtocolVersion(), Info: r.ServerInfo,
		Capabilities: r.Capabilities, Instructions: r.Instructions})
	note := &Outgoing{Method: "notifications/initialized", Version: c.ProtocolVersion(), Handshake: handshake,
		Body: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)}
	return c.t.Notify(ctx, note)
}

// onConnect is the transports' connect hook: on a legacy era every new
// connection (a restarted stdio server, an expired HTTP session) needs
// its own initialize (STD-14).
func (c *Client) onConnect(ctx context.Context) error {
	switch c.Era() {
	case Era2025, Era2024:
		return c.initialize(ctx, true)
	}
	return nil
}
