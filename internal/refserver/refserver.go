// Package refserver builds the mcpwire reference server: an engine.Server
// with every fixture the official MCP conformance suite (revision
// 2026-07-28) drives, plus a few tools of our own for transport tests and
// demos.
//
// Conformance fixtures (names fixed by the suite):
//
//   - tools: test_simple_text, test_image_content, test_audio_content,
//     test_embedded_resource, test_multiple_content_types,
//     test_error_handling, test_tool_with_progress, json_schema_2020_12_tool,
//     test_missing_capability, test_streaming_elicitation, test_logging_tool,
//     test_trigger_tool_change, test_trigger_prompt_change, test_x_mcp_header
//     and the MRTR tools test_input_required_result_{elicitation, sampling,
//     list_roots, request_state, multiple_inputs, multi_round,
//     tampered_state, capabilities};
//   - resources: test://static-text, test://static-binary,
//     test://watched-resource and the template test://template/{id}/data;
//   - prompts: test_simple_prompt, test_prompt_with_arguments,
//     test_prompt_with_embedded_resource, test_prompt_with_image,
//     test_input_required_result_prompt;
//   - completion/complete for the prompt and template arguments.
//
// Our own tools, typed (engine.AddTool, see own.go): echo {text} → {text},
// sleep {ms, steps} → {sleptMs}, big {bytes}, panic {} and touch {uri} →
// {uri}; with Config.Store the handle tools
// draft_create {text}, draft_append {handle, text, idempotencyKey?} and
// draft_read {handle} (see drafts.go).
//
// Every requestState the MRTR fixtures hand out is signed by package mrtr
// (HMAC-SHA256, bound to the principal, the method, the tool or prompt
// name, a digest of the arguments and an expiry; see state.go) and a retry
// whose state fails verification is answered -32602 (SEC-07).
package refserver

import (
	"errors"
	"log/slog"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/state"
)

// ServerName is the serverInfo name of the reference server.
const ServerName = "mcpwire-refserver"

// Config configures the reference server. The zero value is usable.
type Config struct {
	// Logger receives the engine's and the fixtures' logs; nil discards.
	Logger *slog.Logger
	// State signs and verifies the MRTR fixtures' requestState. Servers
	// whose signers share keys accept each other's states, so that a
	// retry served by another replica still verifies (E5); see
	// mrtr.Config.Keys for rotation. Nil: a signer with a random key per
	// process.
	State *mrtr.Signer
	// Store keeps the drafts of the handle tools (draft_create,
	// draft_append, draft_read; see drafts.go), shared by every replica
	// that uses the same store. Nil: no draft tools.
	Store state.Store
	// Backplane is passed to engine.Config.Backplane: change cues (touch,
	// the clock, the trigger tools) then reach the listen streams of every
	// replica. The caller runs engine.Server.Start before serving.
	Backplane state.Backplane
	// ProgressInterval is passed to engine.Config.ProgressInterval: the
	// minimum time between two progress notifications of one request
	// (0: engine default, negative: no rate limit).
	ProgressInterval time.Duration
	// Hooks is passed to engine.Config.Hooks (serve --trace).
	Hooks engine.Hooks
	// Middleware is passed to engine.Config.Middleware (serve --oauth-scope
	// TOOL=SCOPE).
	Middleware []engine.Middleware
	// PageSize is passed to engine.Config.PageSize: the entries on one
	// page of each list (0: engine.DefaultPageSize, which holds every
	// fixture; tests set a small one to page through them).
	PageSize int
	// ValidateOutput is passed to engine.Config.ValidateOutput: every typed
	// tool's result (echo, sleep, touch) is checked against its
	// outputSchema before it is sent. The tests turn it on.
	ValidateOutput bool
	// Legacy adds the fixtures the 2025-11-25 conformance suite drives
	// (test_tool_with_logging, test_sampling, test_elicitation,
	// test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums;
	// see legacy.go), for a server that also serves old clients through
	// transport/legacy.
	Legacy bool
}

// refServer holds what the fixtures share.
type refServer struct {
	srv   *engine.Server
	log   *slog.Logger
	state *mrtr.Signer
	store state.Store
}

// New builds an engine.Server with every fixture registered.
func New(opt Config) (*engine.Server, error) {
	return newServer(opt, time.Now)
}

// newServer is New with a clock (tests move time to expire states).
func newServer(opt Config, now func() time.Time) (*engine.Server, error) {
	signer := opt.State
	if signer == nil {
		var err error
		if signer, err = mrtr.NewSigner(mrtr.Config{Now: now}); err != nil {
			return nil, err
		}
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := engine.New(engine.Config{
		Name:             ServerName,
		Title:            "mcpwire reference server",
		Instructions:     "Reference fixtures for the MCP 2026-07-28 conformance suite, plus echo, sleep, big, panic and touch.",
		ProgressInterval: opt.ProgressInterval,
		Hooks:            opt.Hooks,
		Middleware:       opt.Middleware,
		PageSize:         opt.PageSize,
		// test_logging_tool logs through Call.Log, which needs the
		// (deprecated) logging capability; it still sends nothing unless
		// the request's _meta carries a logLevel (GEN-13).
		Logging:        true,
		Logger:         log,
		Backplane:      opt.Backplane,
		ValidateOutput: opt.ValidateOutput,
	})
	r := &refServer{
		srv:   srv,
		log:   log,
		state: signer,
		store: opt.Store,
	}
	var errs []error
	tools := r.tools()
	if opt.Legacy {
		tools = append(tools, r.legacyTools()...)
	}
	for _, t := range tools {
		errs = append(errs, srv.AddTool(t))
	}
	errs = append(errs, r.addOwnTools())
	for _, res := range r.resources() {
		errs = append(errs, srv.AddResource(res))
	}
	for _, t := range r.templates() {
		errs = append(errs, srv.AddResourceTemplate(t))
	}
	for _, p := range r.prompts() {
		errs = append(errs, srv.AddPrompt(p))
	}
	srv.SetCompletion(r.complete)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	tickClock(srv)
	return srv, nil
}

// tools lists every tool fixture.
func (r *refServer) tools() []engine.Tool {
	var ts []engine.Tool
	ts = append(ts, r.conformanceTools()...)
	ts = append(ts, r.mrtrTools()...)
	ts = append(ts, r.draftTools()...)
	return ts
}
