package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/mcpwire/mcpwire/internal/netutil"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/transport/socket"
)

// statePasswordEnv holds the shared state's password when no
// --state-password-file is given (F10: never in argv).
const statePasswordEnv = "MCPWIRE_STATE_PASSWORD"

// safeFlags are serve's flags for the defaults a reviewer cannot break
// (issue 20, RELIABILITY F1, F3, F10 and the shared requestState keys):
// each loosens one of them, and says so in its name.
type safeFlags struct {
	adminHosts     hostList // --admin-host: more Host names the admin listener answers
	adminTokenFile string   // --admin-token-file: the bearer token the admin listener requires
	adminPprof     bool     // --admin-pprof: serve /debug/pprof/

	statePasswordFile string // --state-password-file
	stateURLPassword  bool   // --insecure-state-url-password: a password in --state's URL
	ephemeralKey      bool   // --ephemeral-state-key: shared state, requestState keys per process

	noAuthSockets bool   // --insecure-no-auth-sockets
	unixMode      string // --unix-mode, octal
}

func (f *serveFlags) safetyFlags(fs *flag.FlagSet) {
	s := &f.safe
	fs.Var(&s.adminHosts, "admin-host", "a Host name the --admin listener answers besides localhost, loopback addresses and its own address (comma-separated or repeated); other Host headers get 421 (DNS rebinding)")
	fs.StringVar(&s.adminTokenFile, "admin-token-file", "", "require this file's bearer token on every --admin request but /healthz and /readyz (401 otherwise)")
	fs.BoolVar(&s.adminPprof, "admin-pprof", false, "serve /debug/pprof/ on the --admin listener (off: 404); its cmdline hides URL passwords")
	fs.StringVar(&s.statePasswordFile, "state-password-file", "", "the --state Redis password, read from this file (default: $"+statePasswordEnv+"); never put it in the --state URL")
	fs.BoolVar(&s.stateURLPassword, "insecure-state-url-password", false, "accept a password inside the --state URL, where every local user can read it in the process list")
	fs.BoolVar(&s.ephemeralKey, "ephemeral-state-key", false, "with a shared --state and no --state-key-file or $"+mrtr.KeysEnv+": sign requestState with a random key per process (an MRTR retry reaching another replica then fails)")
	fs.BoolVar(&s.noAuthSockets, "insecure-no-auth-sockets", false, "serve a non-loopback --tcp address, or a --unix socket other users may open, to anonymous callers (there is no socket authentication in the command)")
	fs.StringVar(&s.unixMode, "unix-mode", "", fmt.Sprintf("the --unix socket file's permission, in octal (default %04o: only its owner may connect)", socket.DefaultUnixMode))
}

// hostList is a repeatable, comma-separated list of host names.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*h = append(*h, p)
		}
	}
	return nil
}

// sharedState reports whether --state is shared by replicas (not memory).
func (f *serveFlags) sharedState() bool { return f.state != "" && f.state != "memory" }

// checkSafe refuses, before anything listens, what would serve anonymous
// callers on a network or a shared Unix socket without the flag that says
// so (F3), a --unix-mode that is not an octal permission, a flag that
// only means something with another one that is missing, and a --state
// that is neither memory nor a Redis URL.
func (f *serveFlags) checkSafe() error {
	if err := checkStateForm(f.state); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	for _, dep := range []struct {
		set        bool
		flag, need string
		have       bool
	}{
		{len(f.safe.adminHosts) > 0, "--admin-host", "--admin", f.admin != ""},
		{f.safe.adminTokenFile != "", "--admin-token-file", "--admin", f.admin != ""},
		{f.safe.adminPprof, "--admin-pprof", "--admin", f.admin != ""},
		{f.safe.noAuthSockets, "--insecure-no-auth-sockets", "--tcp or --unix", f.tcpAddr != "" || f.unixPath != ""},
		{f.safe.unixMode != "", "--unix-mode", "--unix", f.unixPath != ""},
	} {
		if dep.set && !dep.have {
			return fmt.Errorf("serve: %s needs %s", dep.flag, dep.need)
		}
	}
	if f.tcpAddr != "" && !netutil.IsLoopback(f.tcpAddr) && f.nonLoopback && !f.safe.noAuthSockets {
		return fmt.Errorf("serve: --tcp %s is not a loopback address and the command has no socket authentication: anyone who reaches it may call every tool; add --insecure-no-auth-sockets to serve it anyway (behind a firewall, or a proxy that authenticates)", f.tcpAddr)
	}
	mode, err := f.unixFileMode()
	if err != nil {
		return err
	}
	if f.unixPath != "" && mode&0o077 != 0 && !f.safe.noAuthSockets {
		return fmt.Errorf("serve: --unix-mode %04o lets other users connect, and the command has no socket authentication; add --insecure-no-auth-sockets to serve them anyway", mode)
	}
	return nil
}

// unixFileMode is --unix-mode; 0 when not given (the library's default).
func (f *serveFlags) unixFileMode() (os.FileMode, error) {
	if f.safe.unixMode == "" {
		return 0, nil
	}
	m, err := strconv.ParseUint(f.safe.unixMode, 8, 32)
	if err != nil || m == 0 || m > 0o777 {
		return 0, fmt.Errorf("serve: --unix-mode %q: want an octal permission such as 0600 or 0660", f.safe.unixMode)
	}
	return os.FileMode(m), nil
}

// errNoSharedKeys refuses a shared state whose replicas would each sign
// requestState with a key of their own.
var errNoSharedKeys = errors.New("serve: --state is shared by replicas, but the requestState keys are not: give every replica the same --state-key-file (or $" + mrtr.KeysEnv + "); or add --ephemeral-state-key to sign with a random key per process, where an MRTR retry that reaches another replica fails with -32602")

// checkStateKeys is called when no requestState key was configured: with
// a shared --state that is refused unless --ephemeral-state-key, which is
// then warned about on stderr whatever the log level.
func (f *serveFlags) checkStateKeys() error {
	if !f.sharedState() {
		return nil
	}
	if !f.safe.ephemeralKey {
		return errNoSharedKeys
	}
	fmt.Fprintln(os.Stderr, "mcpwire: WARNING: --ephemeral-state-key: this replica signs requestState with a key of its own; an MRTR retry that another replica serves fails with -32602. Give every replica the same --state-key-file.")
	return nil
}

// stateSpec is --state as opened: with the password of
// --state-password-file, else of $MCPWIRE_STATE_PASSWORD, put into the
// URL in this process only. A password written in the --state URL itself
// is refused unless --insecure-state-url-password (F10).
func (f *serveFlags) stateSpec(getenv func(string) string, log *slog.Logger) (string, error) {
	spec := f.state
	if !f.sharedState() {
		if f.safe.statePasswordFile != "" {
			return "", errors.New("serve: --state-password-file needs a shared --state (redis://…)")
		}
		return spec, nil
	}
	u, err := url.Parse(spec)
	if err != nil {
		return spec, nil // openState names the problem, password redacted
	}
	_, inURL := u.User.Password()
	var pw, from string
	switch {
	case f.safe.statePasswordFile != "":
		pw, from = "", "--state-password-file"
		fi, err := os.Stat(f.safe.statePasswordFile)
		if err != nil {
			return "", fmt.Errorf("serve: --state-password-file: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			log.Warn("state password file is readable by group or others", "file", f.safe.statePasswordFile, "mode", fi.Mode().Perm().String())
		}
		b, err := os.ReadFile(f.safe.statePasswordFile)
		if err != nil {
			return "", fmt.Errorf("serve: --state-password-file: %w", err)
		}
		if pw = strings.TrimRight(string(b), "\r\n"); pw == "" {
			return "", fmt.Errorf("serve: --state-password-file %s is empty", f.safe.statePasswordFile)
		}
	case getenv(statePasswordEnv) != "":
		pw, from = getenv(statePasswordEnv), "$"+statePasswordEnv
	}
	switch {
	case inURL && from != "":
		return "", fmt.Errorf("serve: --state %s holds a password and %s gives one too: keep only %s", netutil.RedactURL(spec), from, from)
	case inURL && !f.safe.stateURLPassword:
		return "", fmt.Errorf("serve: --state %s holds a password, which every local user can read in the process list: give it with --state-password-file FILE or $%s instead (or add --insecure-state-url-password)", netutil.RedactURL(spec), statePasswordEnv)
	case from != "":
		user := ""
		if u.User != nil {
			user = u.User.Username()
		}
		u.User = url.UserPassword(user, pw)
		return u.String(), nil
	}
	return spec, nil
}

// adminToken reads --admin-token-file ("" without it).
func (f *serveFlags) adminToken(log *slog.Logger) (string, error) {
	file := f.safe.adminTokenFile
	if file == "" {
		return "", nil
	}
	if f.admin == "" {
		return "", errors.New("serve: --admin-token-file needs --admin")
	}
	fi, err := os.Stat(file)
	if err != nil {
		return "", fmt.Errorf("serve: --admin-token-file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("admin token file is readable by group or others", "file", file, "mode", fi.Mode().Perm().String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("serve: --admin-token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("serve: --admin-token-file %s: want one token on one line", file)
	}
	return tok, nil
}
