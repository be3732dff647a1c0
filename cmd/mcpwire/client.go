package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/oauth"
	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/mcp"
)

// clientFlags are the flags probe and call share.
type clientFlags struct {
	timeout  time.Duration
	verbose  bool
	era      string
	stopWait time.Duration
	caFile   string
	certFile string // --client-cert
	keyFile  string // --client-key

	// OAuth (http targets)
	oauthGrant    string
	oauthClientID string
	oauthSecret   string // refused: a secret in argv
	oauthSecretF  string
	oauthScope    string
	oauthRedirect string
	oauthCIMD     string
	oauthDPoP     bool
}

func (f *clientFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "bound for the whole command")
	fs.BoolVar(&f.verbose, "v", false, "log the client's decisions (probe, retries, restarts) to stderr")
	fs.StringVar(&f.era, "era", "auto", "auto (probe, then fall back), modern, or legacy (2025-11-25 initialize)")
	fs.DurationVar(&f.stopWait, "stop-wait", 2*time.Second, "stdio targets: wait after closing stdin, and again after SIGTERM")
	registerTLSFlags(fs, &f.caFile, &f.certFile, &f.keyFile)
	fs.StringVar(&f.oauthGrant, "oauth", "", "http targets: authorize with OAuth 2.1 on the server's 401: code (browser: the URL is printed, the redirect caught on --oauth-redirect), headless (code grant, redirect followed without a user: test servers) or client-credentials")
	fs.StringVar(&f.oauthClientID, "oauth-client-id", "", "pre-registered client id (default: Client ID Metadata Document or dynamic registration)")
	fs.StringVar(&f.oauthSecretF, "oauth-client-secret-file", "", "file holding the pre-registered client secret (first line; default: $MCPWIRE_OAUTH_CLIENT_SECRET)")
	// Other users can read a process's arguments: the flag stays only to
	// say so (hidden from the help).
	fs.StringVar(&f.oauthSecret, "oauth-client-secret", "", testOnlyPrefix+" refused: use --oauth-client-secret-file or $MCPWIRE_OAUTH_CLIENT_SECRET")
	fs.StringVar(&f.oauthScope, "oauth-scope", "", "scopes to request, space-separated (default: what the server asks for)")
	fs.StringVar(&f.oauthRedirect, "oauth-redirect", "http://127.0.0.1:8976/callback", "loopback redirect URI of the code grant")
	fs.BoolVar(&f.oauthDPoP, "oauth-dpop", false, "bind tokens to a DPoP key where the authorization server supports it")
	fs.StringVar(&f.oauthCIMD, "oauth-client-metadata-url", "", "HTTPS URL of this client's Client ID Metadata Document, used as client_id where the server accepts one")
}

// oauthConfig is the OAuth configuration the flags ask for (nil: none);
// hc, when not nil, makes its requests (metadata, registration, tokens and
// the headless grant's authorization).
func (f *clientFlags) oauthConfig(hc *http.Client) (*oauth.Config, error) {
	if f.oauthGrant == "" {
		return nil, nil
	}
	cfg := &oauth.Config{
		ClientName:        "mcpwire-cli",
		ClientID:          f.oauthClientID,
		Scopes:            strings.Fields(f.oauthScope),
		RedirectURL:       f.oauthRedirect,
		ClientMetadataURL: f.oauthCIMD,
		OfflineAccess:     true,
		DPoP:              f.oauthDPoP,
		HTTPClient:        hc,
	}
	secret, err := f.clientSecret()
	if err != nil {
		return nil, err
	}
	cfg.ClientSecret = secret
	switch f.oauthGrant {
	case "code":
		cfg.Authorize = oauth.LoopbackAuthorize(f.oauthRedirect, func(u string) {
			fmt.Fprint(os.Stderr, authorizePrompt(u))
		})
	case "headless":
		cfg.Authorize = oauth.FollowRedirect(hc)
	case "client-credentials":
		cfg.Grant = oauth.GrantClientCredentials
	default:
		return nil, fmt.Errorf("--oauth %q: want code, headless or client-credentials", f.oauthGrant)
	}
	return cfg, nil
}

// clientSecret is the pre-registered client secret: the first line of
// --oauth-client-secret-file, else $MCPWIRE_OAUTH_CLIENT_SECRET, else none.
// --oauth-client-secret is refused: other users can read a process's
// arguments.
func (f *clientFlags) clientSecret() (string, error) {
	if f.oauthSecret != "" {
		return "", errors.New("--oauth-client-secret puts the secret on the command line, where other users can read it: use --oauth-client-secret-file FILE or $MCPWIRE_OAUTH_CLIENT_SECRET")
	}
	if f.oauthSecretF != "" {
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		secret, err := readSecretFile(f.oauthSecretF, log)
		if err != nil {
			return "", fmt.Errorf("--oauth-client-secret-file: %w", err)
		}
		return secret, nil
	}
	return os.Getenv("MCPWIRE_OAUTH_CLIENT_SECRET"), nil
}

// authorizePrompt asks the user to open the authorization URL. The URL is
// built from the authorization server's metadata: it is escaped like any
// server text.
func authorizePrompt(u string) string {
	return "mcpwire: open this URL to authorize:\n  " + termSafe(u) + "\n"
}

// phaseError is err of the named phase of the command (the version
// probe, the call), saying what timed out and after how long when the
// --timeout bound or a transport's own deadline ran out.
func (f *clientFlags) phaseError(phase string, start time.Time, err error) error {
	if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		return err
	}
	what := phase
	if errors.Is(err, client.ErrNotDelivered) {
		what = "connecting to the server (for " + phase + ")"
	}
	return fmt.Errorf("%s timed out after %s (--timeout %s): %w", what, time.Since(start).Round(time.Millisecond), f.timeout, err)
}

// isTimeout reports a network timeout in err's chain.
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

func (f *clientFlags) open(tgt string) (*client.Client, error) {
	return f.openWith(tgt, nil)
}

// openWith is open declaring caps as clientCapabilities (nil: the
// client's default, {}).
func (f *clientFlags) openWith(tgt string, caps json.RawMessage) (*client.Client, error) {
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	o := target.Config{Logger: logger, StopWait: f.stopWait}
	o.Client.Info = mcp.Implementation{Name: "mcpwire-cli", Version: refserverVersion()}
	o.Client.Timeout = f.timeout
	o.Client.Capabilities = caps
	switch f.era {
	case "auto":
	case "modern":
		o.Client.Era = client.EraModern
	case "legacy":
		o.Client.Era = client.Era2025
	default:
		return nil, fmt.Errorf("--era %q: want auto, modern or legacy", f.era)
	}
	var err error
	if o.HTTP.TLSConfig, err = clientTLS(f.caFile, f.certFile, f.keyFile); err != nil {
		return nil, err
	}
	var hc *http.Client
	if o.HTTP.TLSConfig != nil {
		hc = httpsClient(o.HTTP.TLSConfig)
	}
	if o.OAuth, err = f.oauthConfig(hc); err != nil {
		return nil, err
	}
	return target.Open(tgt, o)
}

// probeReport is what probe prints.
type probeReport struct {
	Era            string             `json:"era"`
	Version        string             `json:"protocolVersion"`
	Supported      []string           `json:"supportedVersions,omitempty"`
	ServerInfo     mcp.Implementation `json:"serverInfo"`
	Capabilities   json.RawMessage    `json:"capabilities"`
	Instructions   string             `json:"instructions,omitempty"`
	Tools          []probeEntry       `json:"tools"`
	ToolsError     string             `json:"toolsError,omitempty"`
	Resources      []probeEntry       `json:"resources"`
	ResourcesError string             `json:"resourcesError,omitempty"`
	Templates      []probeEntry       `json:"resourceTemplates"`
	TemplatesError string             `json:"resourceTemplatesError,omitempty"`
	Prompts        []probeEntry       `json:"prompts"`
	PromptsError   string             `json:"promptsError,omitempty"`
	Elapsed        string             `json:"elapsed"`
}

// probeEntry is one tool, resource, resource template or prompt: its name,
// the URI or URI template of a resource or template, and its description.
type probeEntry struct {
	Name        string `json:"name"`
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	Description string `json:"description,omitempty"`
}

// probeLists are the lists probe asks for, each with the capability that
// announces it, the result member holding it, and where the report keeps
// the entries and the error.
func (r *probeReport) lists() []struct {
	method, capability, key string
	entries                 *[]probeEntry
	err                     *string
} {
	return []struct {
		method, capability, key string
		entries                 *[]probeEntry
		err                     *string
	}{
		{"tools/list", "tools", "tools", &r.Tools, &r.ToolsError},
		{"resources/list", "resources", "resources", &r.Resources, &r.ResourcesError},
		{"resources/templates/list", "resources", "resourceTemplates", &r.Templates, &r.TemplatesError},
		{"prompts/list", "prompts", "prompts", &r.Prompts, &r.PromptsError},
	}
}

func runProbe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("probe", flag.ExitOnError)
	var cf clientFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mcpwire probe [flags] TARGET\n\nTARGET: http://host:port/path, stdio:'command args', tcp://host:port, unix:///path")
		printVisibleDefaults(fs)
	}
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("probe needs exactly one TARGET")
	}
	c, err := cf.open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	start := time.Now()
	d, err := c.Probe(ctx)
	if err != nil {
		return cf.phaseError("the version probe", start, err)
	}
	rep := probeReport{Era: c.Era().String(), Version: c.ProtocolVersion(), Supported: d.Supported,
		ServerInfo: d.Info, Capabilities: d.Capabilities, Instructions: d.Instructions,
		Tools: []probeEntry{}, Resources: []probeEntry{}, Templates: []probeEntry{}, Prompts: []probeEntry{}}
	for _, l := range rep.lists() {
		if !hasCapability(d.Capabilities, l.capability) {
			continue
		}
		// Every page, following nextCursor (Client.List).
		raws, err := c.List(ctx, l.method, l.key)
		if err != nil {
			*l.err = cf.phaseError(l.method, start, err).Error()
		}
		for _, raw := range raws {
			var e probeEntry
			if json.Unmarshal(raw, &e) == nil && (e.Name != "" || e.URI != "" || e.URITemplate != "") {
				*l.entries = append(*l.entries, e)
			}
		}
	}
	rep.Elapsed = time.Since(start).Round(time.Microsecond).String()
	return printProbe(os.Stdout, &rep, *asJSON)
}

func hasCapability(caps json.RawMessage, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

func printProbe(w io.Writer, r *probeReport, asJSON bool) error {
	// Everything but era and elapsed comes from the server: printed
	// through jsonSafe and termSafe (term.go).
	if asJSON {
		b, err := marshalIndent(r)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", jsonSafe(b))
		return err
	}
	fmt.Fprintf(w, "era:          %s\n", r.Era)
	fmt.Fprintf(w, "revision:     %s\n", termSafe(r.Version))
	if len(r.Supported) > 0 {
		fmt.Fprintf(w, "supported:    %s\n", termSafe(strings.Join(r.Supported, ", ")))
	}
	fmt.Fprintf(w, "server:       %s %s\n", termSafe(r.ServerInfo.Name), termSafe(r.ServerInfo.Version))
	fmt.Fprintf(w, "capabilities: %s\n", compactSafe(r.Capabilities))
	if r.Instructions != "" {
		fmt.Fprintf(w, "instructions: %s\n", termLines(r.Instructions, "              "))
	}
	for _, l := range []struct {
		title   string
		entries []probeEntry
		err     string
	}{
		{"tools", r.Tools, r.ToolsError},
		{"resources", r.Resources, r.ResourcesError},
		{"resource templates", r.Templates, r.TemplatesError},
		{"prompts", r.Prompts, r.PromptsError},
	} {
		if len(l.entries) == 0 && l.err == "" && l.title != "tools" {
			continue
		}
		fmt.Fprintf(w, "%s (%d):\n", l.title, len(l.entries))
		for _, e := range l.entries {
			name := termSafe(e.Name)
			if u := e.URI + e.URITemplate; u != "" {
				name = termSafe(u)
				if e.Name != "" {
					name += " (" + termSafe(e.Name) + ")"
				}
			}
			if e.Description != "" {
				fmt.Fprintf(w, "  %-32s %s\n", name, termSafe(firstLine(e.Description)))
			} else {
				fmt.Fprintf(w, "  %s\n", name)
			}
		}
		if l.err != "" {
			fmt.Fprintf(w, "  failed: %s\n", termSafe(l.err))
		}
	}
	fmt.Fprintf(w, "elapsed:      %s\n", r.Elapsed)
	return nil
}

// marshalIndent is json.MarshalIndent without HTML escaping: a '<' the
// server wrote is printed as '<', not \u003c.
func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// indentRaw indents the JSON the server sent as it is (member order,
// numbers and escapes kept; nothing HTML-escaped).
func indentRaw(raw json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func runCall(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("call", flag.ExitOnError)
	var cf clientFlags
	cf.register(fs)
	progress := fs.Bool("progress", true, "ask for progress and print it to stderr")
	logLevel := fs.String("log-level", "", "ask for log messages at or above this level (printed to stderr)")
	var inputs inputFlags
	fs.Var(&inputs, "input", "`KEY=JSON` or KEY=@FILE: the answer to the server's input request KEY (MRTR; repeatable), e.g. 'user_name={\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}'")
	inputsFile := fs.String("inputs", "", "a JSON `FILE` of answers to input requests, {\"KEY\": answer, …} (- for stdin); --input wins")
	caps := fs.String("capabilities", defaultCallCaps, "the clientCapabilities `JSON` declared on each request: the kinds of input the server may ask for")
	resend := fs.Bool("resend", false, "if the connection is lost while the call runs (a stdio server that crashed is restarted, a cut connection redialled), send the call once more: it may then run twice; without it the loss is reported")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mcpwire call [flags] TARGET METHOD|TOOL [JSON]\n\n"+
			"A name with a '/' is a method and JSON its params (tools/list, resources/read '{\"uri\":\"…\"}');\n"+
			"any other name is a tool and JSON its arguments. The result goes to stdout.\n\n"+
			"When the server asks for input (an elicitation form or URL, a sampling request, the roots), the\n"+
			"request is shown on stderr and answered from --input or --inputs; without an answer call says\n"+
			"which --input it needs and exits 1.")
		printVisibleDefaults(fs)
	}
	_ = fs.Parse(args)
	if fs.NArg() < 2 || fs.NArg() > 3 {
		fs.Usage()
		return errors.New("call needs TARGET, METHOD|TOOL and optional JSON")
	}
	name := fs.Arg(1)
	var payload json.RawMessage
	if fs.NArg() == 3 {
		payload = json.RawMessage(fs.Arg(2))
		if !json.Valid(payload) {
			return fmt.Errorf("JSON argument is not valid JSON: %s", termSafe(fs.Arg(2)))
		}
	}
	if !json.Valid([]byte(*caps)) || !strings.HasPrefix(strings.TrimSpace(*caps), "{") {
		return errors.New("--capabilities: want a JSON object")
	}
	capsSet := false
	fs.Visit(func(f *flag.Flag) { capsSet = capsSet || f.Name == "capabilities" })
	if !capsSet && cf.era == "legacy" {
		// A 2025-11-25 server would send these as requests of its own,
		// which this client does not answer (only MRTR is answered).
		*caps = "{}"
	}
	answers, err := loadAnswers(*inputsFile, inputs)
	if err != nil {
		return err
	}
	c, err := cf.openWith(fs.Arg(0), json.RawMessage(*caps))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	// Resend is the command's own (below): the client's would re-send up
	// to Config.Retries times, --resend once.
	opts := &client.CallOptions{LogLevel: *logLevel}
	if *progress {
		opts.OnProgress = func(p client.Progress) {
			if p.Total > 0 {
				fmt.Fprintf(os.Stderr, "progress %g/%g %s\n", p.Progress, p.Total, termSafe(p.Message))
			} else {
				fmt.Fprintf(os.Stderr, "progress %g %s\n", p.Progress, termSafe(p.Message))
			}
		}
	}
	if *logLevel != "" {
		opts.OnLog = func(m client.LogMessage) {
			fmt.Fprintf(os.Stderr, "log %s: %s\n", termSafe(m.Level), jsonSafe(m.Data))
		}
	}
	method, params := name, payload
	if !strings.Contains(name, "/") {
		if payload == nil {
			payload = json.RawMessage(`{}`)
		}
		method = "tools/call"
		params, _ = json.Marshal(map[string]json.RawMessage{"name": mustJSON(name), "arguments": payload})
	}
	start := time.Now()
	if _, err := c.Probe(ctx); err != nil {
		return cf.phaseError("the version probe", start, err)
	}
	if method == "tools/call" && c.Era() != client.Era2024 {
		// Learn the tool's x-mcp-header annotations first (PARAM-05), as
		// a client that lists tools before calling them does.
		_, _ = c.ListTools(ctx)
	}
	res, err := callWithInputs(ctx, c, method, params, opts, answers, os.Stderr)
	if err != nil && *resend && errors.Is(err, client.ErrDropped) && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "note: the connection was lost before the reply; sending %s %s once more (--resend): it may run twice\n", method, termSafe(name))
		res, err = callWithInputs(ctx, c, method, params, opts, answers, os.Stderr)
		if errors.Is(err, client.ErrDropped) {
			return fmt.Errorf("%s %s: the connection was lost again after --resend: %w", method, name, err)
		}
	}
	if err != nil {
		// One line on stderr (main prints it, made safe): nothing on
		// stdout, which holds results only.
		var safe *safeError
		if errors.As(err, &safe) {
			return safe
		}
		if errors.Is(err, client.ErrDropped) && !*resend {
			return fmt.Errorf("%s %s: the connection was lost before the reply (the server may have crashed; it may or may not have run the call): add --resend to send it once more: %w", method, name, err)
		}
		return cf.phaseError(method+" "+name, start, err)
	}
	for _, k := range answers.unused() {
		fmt.Fprintf(os.Stderr, "note: the server did not ask for input \"%s\" (%s)\n", termSafe(k), termSafe(answers.from[k]))
	}
	if b, err := indentRaw(res.Raw); err == nil {
		if _, err := fmt.Fprintf(os.Stdout, "%s\n", jsonSafe(b)); err != nil {
			return err
		}
	}
	if method == "tools/call" {
		var tr struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(res.Raw, &tr) == nil && tr.IsError {
			return errors.New("the tool reported an error (isError)")
		}
	}
	return nil
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
